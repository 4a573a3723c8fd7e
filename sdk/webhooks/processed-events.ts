// Deliveries are retried until the receiver answers 2xx, so the same event can arrive more
// than once: remember which event ids were handled and handle each only once.
import type { WebhookEvent } from './webhook-event.ts';

/**
 * Where a receiver records the ids of the events it has processed. In production
 * back it with your database (a table with a unique event id, inserted in the same
 * transaction as the effect of the event); `InMemoryProcessedEventStore` suits one
 * process and tests.
 */
export interface ProcessedEventStore {
  /** Records the event id; resolves true the first time, false when it was already recorded. */
  markProcessed(eventId: string): Promise<boolean>;
  /** Forgets an event id, so that a redelivery of an event whose handling failed is processed again. */
  unmark(eventId: string): Promise<void>;
}

/** Options of `InMemoryProcessedEventStore`. */
export interface InMemoryProcessedEventStoreOptions {
  /** How many ids to keep at most; the oldest are forgotten first. Default 10 000. */
  readonly maxEntries?: number;
  /** How long an id is remembered, in milliseconds. Default 3 days, the span over which a failing endpoint is retried. */
  readonly ttlMs?: number;
  /** The current time in milliseconds, like `Date.now` (the default). For tests. */
  readonly now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 10_000;
const DEFAULT_TTL_MS = 3 * 24 * 60 * 60 * 1000;

/**
 * A bounded, in-process `ProcessedEventStore`. It forgets ids after `ttlMs` and
 * beyond `maxEntries`, and everything on restart, so a late redelivery can be
 * processed twice: use a database-backed store when that matters.
 */
export class InMemoryProcessedEventStore implements ProcessedEventStore {
  // Map keeps insertion order, so the first entries are the oldest.
  readonly #seen = new Map<string, number>();
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  /** @throws RangeError when maxEntries or ttlMs is not positive. */
  constructor(options: InMemoryProcessedEventStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.#now = options.now ?? Date.now;
    if (!Number.isInteger(this.#maxEntries) || this.#maxEntries <= 0) throw new RangeError('maxEntries must be a positive integer.');
    if (!(this.#ttlMs > 0)) throw new RangeError('ttlMs must be a positive number of milliseconds.');
  }

  /** How many ids are remembered now. */
  get size(): number {
    this.#evictExpired(this.#now());
    return this.#seen.size;
  }

  /** Records the event id; resolves true the first time (within the TTL), false when already recorded. */
  async markProcessed(eventId: string): Promise<boolean> {
    const now = this.#now();
    this.#evictExpired(now);
    if (this.#seen.has(eventId)) return false;
    this.#seen.set(eventId, now);
    while (this.#seen.size > this.#maxEntries) {
      const oldest = this.#seen.keys().next();
      if (oldest.done) break;
      this.#seen.delete(oldest.value);
    }
    return true;
  }

  /** Forgets the event id. */
  async unmark(eventId: string): Promise<void> {
    this.#seen.delete(eventId);
  }

  #evictExpired(now: number): void {
    for (const [id, at] of this.#seen) {
      if (now - at < this.#ttlMs) break;
      this.#seen.delete(id);
    }
  }
}

/** What `processEventOnce` did with an event. */
export type ProcessEventOutcome<T> = { readonly status: 'processed'; readonly result: T } | { readonly status: 'duplicate' };

/**
 * Runs `handler` for an event unless an event with the same id was already
 * processed. Answer 2xx for both outcomes. When the handler throws, the id is
 * forgotten again and the error rethrown: answer non-2xx so the event is redelivered.
 *
 * ```ts
 * const event = verifyWebhook(req.body, req.headers['checkout-signature'], secret);
 * await processEventOnce(store, event, async (e) => { if (e.type === 'order.paid') await fulfil(e.data.reference); });
 * res.sendStatus(200);
 * ```
 *
 * @throws whatever the handler throws.
 */
export async function processEventOnce<E extends Pick<WebhookEvent, 'id'>, T>(
  store: ProcessedEventStore,
  event: E,
  handler: (event: E) => Promise<T> | T,
): Promise<ProcessEventOutcome<T>> {
  if (!(await store.markProcessed(event.id))) return { status: 'duplicate' };
  try {
    return { status: 'processed', result: await handler(event) };
  } catch (err) {
    await store.unmark(event.id);
    throw err;
  }
}
