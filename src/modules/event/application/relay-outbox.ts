import type { EventPublisher } from '../ports/event-publisher.port.ts';
import type { OutboxReader } from '../ports/event-outbox.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { Metrics } from '../../../kernel/ports/metrics.port.ts';
import type { DomainEvent } from '../domain/domain-event.ts';

/** Moves committed events from the outbox to the broker (or, without one, to the event stream in Postgres). */
export interface OutboxRelay {
  /** Publishes one batch; resolves to the number of events published. */
  relayOnce(): Promise<number>;
  /** Relays continuously until stop() is called. */
  start(): void;
  /** Stops the loop and waits for the batch in flight. */
  stop(): Promise<void>;
}

/** Options of {@link createOutboxRelay}. */
export interface OutboxRelayOptions {
  readonly reader: OutboxReader;
  /**
   * The broker. Absent when there is none (no NATS_URL): marking a batch published is then its
   * publication, since the reader appends it to the event stream in Postgres as it marks it.
   */
  readonly publisher: EventPublisher | undefined;
  readonly batchSize: number;
  /** Pause between polls when the outbox is empty. */
  readonly idleMs: number;
  /** Longest pause after repeated failures (broker or database down). */
  readonly maxBackoffMs: number;
  /** A batch that failed (its events, when it had read them, stay for the next pass). */
  readonly onError: (err: unknown, events: readonly DomainEvent[]) => void;
  /** Told of each batch published (for a debug log line with the event ids). */
  readonly onPublished?: (events: readonly DomainEvent[]) => void;
  /** Where each event's delay from commit to publication is counted; with the clock that tells it. */
  readonly metrics?: Pick<Metrics, 'outboxPublished'>;
  readonly clock?: Clock;
}

/**
 * Creates the outbox relay. Each batch is read under row locks (two relays
 * never take the same event), published with msgID = event id, then marked
 * published in the same transaction (without a broker, the marking appends
 * the batch to the event stream in Postgres). A crash between publish and mark leaves
 * the rows unmarked; the next pass publishes them again and the broker drops
 * the duplicates by msgID.
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  // The events of the batch in hand, so that a failure is logged with their ids.
  let inHand: readonly DomainEvent[] = [];
  const relayOnce = () =>
    options.reader.withUnpublished(options.batchSize, async (batch) => {
      if (batch.events.length === 0) return 0;
      inHand = batch.events;
      await options.publisher?.publish(batch.events);
      await batch.markPublished();
      inHand = [];
      if (options.metrics) {
        const now = (options.clock?.now() ?? new Date()).getTime();
        for (const event of batch.events) options.metrics.outboxPublished(now - event.createdAt.getTime());
      }
      options.onPublished?.(batch.events);
      return batch.events.length;
    });

  // Resolves at once once stopped: stop() may be called while a batch is in
  // flight, after which the loop must not sit out an idle pause or a backoff.
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (!running) return resolve();
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function run(): Promise<void> {
    let failures = 0;
    while (running) {
      try {
        const count = await relayOnce();
        failures = 0;
        if (count < options.batchSize) await sleep(options.idleMs);
      } catch (err) {
        failures += 1;
        options.onError(err, inHand);
        inHand = [];
        await sleep(Math.min(options.maxBackoffMs, options.idleMs * 2 ** Math.min(failures, 10)));
      }
    }
  }

  return {
    relayOnce,
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
    },
  };
}
