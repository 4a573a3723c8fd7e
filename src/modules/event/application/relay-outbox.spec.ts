import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { DomainEvent } from '../domain/domain-event.ts';
import type { OutboxBatch, OutboxReader } from '../ports/event-outbox.port.ts';
import type { EventPublisher } from '../ports/event-publisher.port.ts';
import { createOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from './relay-outbox.ts';

function event(n: number): DomainEvent {
  return {
    id: `evt_${n}`,
    type: 'order.created',
    merchantId: 'mer_1',
    livemode: false,
    subject: { type: 'order', id: `ord_${n}` },
    orderId: `ord_${n}`,
    reference: `INV-${n}`,
    sequence: 1,
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, n)),
    data: { amount: 100 * n },
  };
}

/** An in-memory outbox: a batch's events are marked only when markPublished is called. */
class FakeOutbox implements OutboxReader {
  readonly marked = new Set<string>();
  readonly #events: DomainEvent[];

  constructor(events: DomainEvent[]) {
    this.#events = events;
  }

  async withUnpublished<T>(limit: number, fn: (batch: OutboxBatch) => Promise<T>): Promise<T> {
    const events = this.#events.filter((e) => !this.marked.has(e.id)).slice(0, limit);
    return fn({
      events,
      markPublished: async () => {
        for (const e of events) this.marked.add(e.id);
      },
    });
  }
}

/** A publisher whose every call the test answers by hand. */
class ManualPublisher implements EventPublisher {
  readonly calls: { ids: string[]; resolve: () => void; reject: (err: unknown) => void }[] = [];

  publish(events: readonly DomainEvent[]): Promise<void> {
    return new Promise((resolve, reject) => this.calls.push({ ids: events.map((e) => e.id), resolve, reject }));
  }
}

/** A publisher that fails its first `failures` calls, then succeeds; records each call. */
class FlakyPublisher implements EventPublisher {
  readonly calls: string[][] = [];
  #failuresLeft: number;

  constructor(failures: number) {
    this.#failuresLeft = failures;
  }

  async publish(events: readonly DomainEvent[]): Promise<void> {
    this.calls.push(events.map((e) => e.id));
    if (this.#failuresLeft > 0) {
      this.#failuresLeft -= 1;
      throw new Error('broker unavailable');
    }
  }
}

function options(reader: OutboxReader, publisher: EventPublisher | undefined, errors: unknown[], overrides: Partial<OutboxRelayOptions> = {}): OutboxRelayOptions {
  return { reader, publisher, batchSize: 10, idleMs: 100, maxBackoffMs: 1000, onError: (err) => errors.push(err), ...overrides };
}

/** Tracks whether a promise has settled, without awaiting it. */
function track(promise: Promise<unknown>): { settled: boolean } {
  const state = { settled: false };
  void promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('createOutboxRelay', () => {
  test('counts each published event\'s delay from its commit, and names the events of a failed batch', async () => {
    const outbox = new FakeOutbox([event(1), event(2)]);
    const delays: number[] = [];
    const failed: string[][] = [];
    const published: string[][] = [];
    const relay = createOutboxRelay(
      options(outbox, new FlakyPublisher(1), [], {
        metrics: { outboxPublished: (ms) => delays.push(ms) },
        clock: { now: () => new Date(Date.UTC(2025, 0, 1, 0, 0, 10)) },
        onError: (_err, events) => failed.push(events.map((e) => e.id)),
        onPublished: (events) => published.push(events.map((e) => e.id)),
      }),
    );
    relay.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(failed).toEqual([['evt_1', 'evt_2']]);
    expect(delays).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    await relay.stop();
    // Committed at 00:00:01 and 00:00:02, published at 00:00:10.
    expect(delays).toEqual([9000, 8000]);
    expect(published).toEqual([['evt_1', 'evt_2']]);
  });

  test('without a broker (no NATS): marking the batch is its publication, counted as one', async () => {
    const outbox = new FakeOutbox([event(1), event(2), event(3)]);
    const delays: number[] = [];
    const relay = createOutboxRelay({
      ...options(outbox, undefined, [], { batchSize: 2 }),
      metrics: { outboxPublished: (ms) => delays.push(ms) },
      clock: { now: () => new Date(Date.UTC(2025, 0, 1, 0, 0, 10)) },
    });
    await expect(relay.relayOnce()).resolves.toBe(2);
    await expect(relay.relayOnce()).resolves.toBe(1);
    await expect(relay.relayOnce()).resolves.toBe(0);
    expect([...outbox.marked]).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(delays).toEqual([9000, 8000, 7000]);
  });

  test('relayOnce: a publish failure rejects and leaves the batch unmarked', async () => {
    const outbox = new FakeOutbox([event(1), event(2)]);
    const relay = createOutboxRelay(options(outbox, new FlakyPublisher(1), []));

    await expect(relay.relayOnce()).rejects.toThrow('broker unavailable');
    expect(outbox.marked.size).toBe(0);

    await expect(relay.relayOnce()).resolves.toBe(2);
    expect([...outbox.marked]).toEqual(['evt_1', 'evt_2']);
  });

  test('the loop reports a failed publish, leaves the batch unmarked, and retries it with a growing, capped backoff', async () => {
    const outbox = new FakeOutbox([event(1), event(2), event(3)]);
    const publisher = new FlakyPublisher(4);
    const errors: unknown[] = [];
    const relay = createOutboxRelay(options(outbox, publisher, errors, { idleMs: 100, maxBackoffMs: 1000 }));

    relay.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(publisher.calls).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect(outbox.marked.size).toBe(0);

    // Backoff after the n-th consecutive failure: min(maxBackoffMs, idleMs * 2^n) = 200, 400, 800, then capped at 1000.
    let attempts = 1;
    for (const backoff of [200, 400, 800, 1000]) {
      await vi.advanceTimersByTimeAsync(backoff - 1);
      expect(publisher.calls, `no retry before ${backoff} ms`).toHaveLength(attempts);
      expect(outbox.marked.size).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      attempts += 1;
      expect(publisher.calls, `retry after ${backoff} ms`).toHaveLength(attempts);
    }

    // The fifth attempt succeeded: the same batch, now marked; failures were reported, not thrown.
    expect(publisher.calls.every((ids) => ids.join() === 'evt_1,evt_2,evt_3')).toBe(true);
    expect([...outbox.marked]).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(errors).toHaveLength(4);
    expect(errors.every((err) => err instanceof Error && err.message === 'broker unavailable')).toBe(true);

    // After a success the backoff resets: an empty outbox is polled every idleMs, without publishing.
    await vi.advanceTimersByTimeAsync(1000);
    expect(publisher.calls).toHaveLength(attempts);
    await stop(relay);
  });

  test('stop() waits for the batch in flight, which is marked, and starts no further batch', async () => {
    const outbox = new FakeOutbox([event(1), event(2)]);
    const publisher = new ManualPublisher();
    const relay = createOutboxRelay(options(outbox, publisher, [], { batchSize: 1 }));

    relay.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(publisher.calls).toHaveLength(1);

    const stopped = relay.stop();
    const state = track(stopped);
    await vi.advanceTimersByTimeAsync(5000);
    expect(state.settled).toBe(false);
    expect(outbox.marked.size).toBe(0);

    publisher.calls[0]!.resolve();
    await stopped;
    expect([...outbox.marked]).toEqual(['evt_1']);
    // batchSize 1 and a full batch: a running loop would go straight on to evt_2.
    await vi.advanceTimersByTimeAsync(5000);
    expect(publisher.calls).toHaveLength(1);
  });

  test('stop() during a batch that then fails returns without waiting out the backoff', async () => {
    const outbox = new FakeOutbox([event(1)]);
    const publisher = new ManualPublisher();
    const errors: unknown[] = [];
    const relay = createOutboxRelay(options(outbox, publisher, errors, { idleMs: 1000, maxBackoffMs: 60_000 }));

    relay.start();
    await vi.advanceTimersByTimeAsync(0);
    const stopped = relay.stop();
    const state = track(stopped);
    publisher.calls[0]!.reject(new Error('broker unavailable'));
    // No timer is advanced: stop() must not sit out the 2 s backoff after this failure.
    await vi.advanceTimersByTimeAsync(0);
    expect(state.settled).toBe(true);
    expect(errors).toHaveLength(1);
    expect(outbox.marked.size).toBe(0);
    expect(publisher.calls).toHaveLength(1);
  });

  test('stop() while the loop idles returns at once', async () => {
    const outbox = new FakeOutbox([]);
    const relay = createOutboxRelay(options(outbox, new ManualPublisher(), [], { idleMs: 60_000 }));
    relay.start();
    await vi.advanceTimersByTimeAsync(0);
    const state = track(relay.stop());
    await vi.advanceTimersByTimeAsync(0);
    expect(state.settled).toBe(true);
  });
});

async function stop(relay: OutboxRelay): Promise<void> {
  const stopped = relay.stop();
  await vi.advanceTimersByTimeAsync(1000);
  await stopped;
}
