// Events: GET /v1/events[/:id].
import { seg, type HttpClient } from '../http-client.ts';
import { pagePromise, type PagePromise } from '../pagination.ts';
import type { Event, EventListParams, ListJson, RequestOptions } from '../types.ts';

/** `checkout.events` */
export class Events {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /** Retrieves an event. */
  retrieve(id: string, options?: RequestOptions): Promise<Event> {
    return this.#client.request({ method: 'GET', path: `/v1/events/${seg(id)}` }, options);
  }

  /** Lists events; `for await` to walk every page. */
  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<Event> {
    return pagePromise((startingAfter) =>
      this.#client.request<ListJson<Event>>({ method: 'GET', path: '/v1/events', query: { ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) } }, options),
    );
  }
}
