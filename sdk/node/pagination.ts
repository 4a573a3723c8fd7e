// Pages of a list, and auto-pagination across them: a list call answers a promise of its first
// page that is also an async iterable over every object of every page, following starting_after.
import type { ListJson } from './types.ts';

/** Fetches the page after the object with this id. */
export type NextPage<T extends { id: string }> = (startingAfter: string) => Promise<Page<T>>;

/** One page of a list, iterable (async) over its objects and every later page's. */
export class Page<T extends { id: string }> implements ListJson<T>, AsyncIterable<T> {
  readonly object = 'list' as const;
  readonly url: string;
  readonly has_more: boolean;
  readonly data: T[];
  readonly #next: NextPage<T>;

  constructor(json: ListJson<T>, next: NextPage<T>) {
    this.url = json.url;
    this.has_more = json.has_more;
    this.data = json.data;
    this.#next = next;
  }

  /** The next page, or undefined after the last. */
  async nextPage(): Promise<Page<T> | undefined> {
    const last = this.data.at(-1);
    if (!this.has_more || last === undefined) return undefined;
    return this.#next(last.id);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* this.data;
    let page = await this.nextPage();
    while (page) {
      yield* page.data;
      page = await page.nextPage();
    }
  }
}

/** What a list call answers: `await` it for the first page, or `for await` over every object. */
export interface PagePromise<T extends { id: string }> extends Promise<Page<T>>, AsyncIterable<T> {
  /** Every object of every page, stopping at `max` (10,000 by default) so a runaway list cannot fill memory. */
  toArray(options?: { max?: number }): Promise<T[]>;
}

/** Makes a list call's answer from the request of a page. */
export function pagePromise<T extends { id: string }>(fetchPage: (startingAfter: string | undefined) => Promise<ListJson<T>>): PagePromise<T> {
  const load = (startingAfter: string | undefined): Promise<Page<T>> => fetchPage(startingAfter).then((json) => new Page(json, load));
  const first = load(undefined);
  const iterate = async function* (): AsyncGenerator<T> {
    yield* await first;
  };
  return Object.assign(first, {
    [Symbol.asyncIterator]: iterate,
    async toArray(options: { max?: number } = {}): Promise<T[]> {
      const max = options.max ?? 10_000;
      const items: T[] = [];
      for await (const item of iterate()) {
        if (items.length >= max) break;
        items.push(item);
      }
      return items;
    },
  });
}
