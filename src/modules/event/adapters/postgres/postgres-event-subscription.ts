import type { Knex } from 'knex';
import type { Consumption, EventSubscription, ReceivedEvent, Settlement } from '../../ports/event-subscription.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import { rowToEvent, type EventRow } from './postgres-event-outbox.ts';
import type { PostgresEventNotifications } from './postgres-event-notifications.ts';

/** Options of {@link PostgresEventSubscription}. */
export interface PostgresEventSubscriptionOptions {
  /** This installation's id: every event of its database is its own. */
  readonly installationId: string;
  /** Wake-ups when the relay appends to the stream; without them the consumer only polls. */
  readonly notifications?: PostgresEventNotifications;
  /** How long an event handed to a process stays its own before it is handed over again (JetStream's ack wait). */
  readonly ackWaitMs?: number;
  /** Longest sleep between two looks at the stream when no notification comes. */
  readonly pollMs?: number;
  /** Events in hand (handed over and not settled) at most in this process. */
  readonly maxInHand?: number;
}

/** A row of the events table read for a consumer, with how many times it has been handed over. */
type ClaimedRow = EventRow & { stream_seq: string; deliveries: number };

/** An events row that is not an event (hand-made, or damaged). */
export class UnreadableEventRowError extends Error {
  override readonly name = 'UnreadableEventRowError';
}

/**
 * Durable consumption of the event stream in Postgres (no NATS), with the
 * semantics of the JetStream consumer: a durable name whose position and
 * unsettled events live in the database, so any number of processes share
 * its work and a crash loses nothing.
 *
 * Each look at the stream is one statement: it hands over again the events
 * of this consumer whose time has come (a retry's delay, or the ack wait of
 * a process that died with them), and takes in the events after the
 * consumer's position, moving the position past them. Both kinds are locked
 * `FOR UPDATE SKIP LOCKED` (the pending rows, the consumer's row), so two
 * processes never take the same event at once; each taken event gets a row
 * in `event_consumer_pending`, due again after the ack wait. `handled` and
 * `reject` delete that row (in batches); `retry` moves its due time. A
 * handler that throws gets the event again in a second.
 */
export class PostgresEventSubscription implements EventSubscription {
  readonly #knex: Knex;
  readonly #name: string;
  readonly #options: Required<Omit<PostgresEventSubscriptionOptions, 'notifications'>> & Pick<PostgresEventSubscriptionOptions, 'notifications'>;

  constructor(knex: Knex, durableName: string, options: PostgresEventSubscriptionOptions) {
    this.#knex = knex;
    this.#name = durableName;
    this.#options = { ackWaitMs: 30_000, pollMs: 100, maxInHand: 64, ...options };
  }

  async consume(handler: (received: ReceivedEvent) => Promise<Settlement>, onError: (err: unknown) => void): Promise<Consumption> {
    const knex = this.#knex;
    const name = this.#name;
    const { pollMs, maxInHand, installationId, notifications } = this.#options;
    // A new consumer starts at the beginning of the stream, as a JetStream durable with DeliverPolicy.All.
    await translateErrors(() => knex.raw('INSERT INTO event_consumers (name) VALUES (?) ON CONFLICT (name) DO NOTHING', [name]));

    let running = true;
    const inHand = new Set<Promise<void>>();
    let wake: (() => void) | undefined;
    let pendingWake = false;
    const nudge = () => {
      pendingWake = true;
      wake?.();
    };
    /** Sleeps up to ms; a notification, a settled event or stop() ends it early. */
    const sleep = async (ms: number) => {
      if (pendingWake || !running) {
        pendingWake = false;
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
      pendingWake = false;
    };
    const unsubscribe = notifications?.subscribe(nudge);

    // Settlements are written in batches: one statement for the acks (and rejections) settled since the last.
    const done: string[] = [];
    const retries: { seq: string; delayMs: number }[] = [];
    /** The earliest time a retry of ours falls due, so the loop looks then rather than a poll later. */
    let nextRetryAt = Number.POSITIVE_INFINITY;
    let writing: Promise<void> | undefined;
    const writeSettlements = async (): Promise<boolean> => {
      const acked = done.splice(0);
      const retried = retries.splice(0);
      try {
        if (acked.length > 0) {
          await translateErrors(() => knex.raw('DELETE FROM event_consumer_pending WHERE consumer = ? AND stream_seq = ANY(?::bigint[])', [name, acked]));
        }
        if (retried.length > 0) {
          await translateErrors(() =>
            knex.raw(
              `UPDATE event_consumer_pending p SET due_at = now() + r.delay_ms * interval '1 millisecond'
                 FROM unnest(?::bigint[], ?::bigint[]) AS r (stream_seq, delay_ms)
                WHERE p.consumer = ? AND p.stream_seq = r.stream_seq`,
              [retried.map((r) => r.seq), retried.map((r) => r.delayMs), name],
            ),
          );
        }
        return true;
      } catch (err) {
        // Kept for the next write; should the process stop first, the events come back after the ack wait.
        done.unshift(...acked);
        retries.unshift(...retried);
        onError(err);
        return false;
      }
    };
    const flush = () => {
      writing ??= (async () => {
        let failures = 0;
        while (done.length > 0 || retries.length > 0) {
          if (await writeSettlements()) failures = 0;
          else {
            failures += 1;
            if (!running) return;
            await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** failures)));
          }
        }
      })().finally(() => {
        writing = undefined;
      });
    };
    const settle = (seq: string, settlement: Settlement) => {
      if (settlement.kind === 'retry') {
        retries.push({ seq, delayMs: Math.max(0, Math.round(settlement.delayMs)) });
        nextRetryAt = Math.min(nextRetryAt, Date.now() + settlement.delayMs);
      } else {
        done.push(seq);
      }
      flush();
    };

    const launch = (row: ClaimedRow) => {
      const work: Promise<void> = (async () => {
        let received: ReceivedEvent;
        try {
          received = { event: rowToEvent(row), installationId, deliveryCount: row.deliveries };
        } catch (err) {
          // It can never become readable: handing it over again would loop for ever.
          onError(new UnreadableEventRowError(`events row at stream position ${row.stream_seq} is not an event (${(err as Error).message}); rejected`, { cause: err }));
          settle(row.stream_seq, { kind: 'reject' });
          return;
        }
        try {
          settle(row.stream_seq, await handler(received));
        } catch (err) {
          onError(err);
          settle(row.stream_seq, { kind: 'retry', delayMs: 1000 });
        }
      })().finally(() => {
        inHand.delete(work);
        // Room again for a full batch: look at once rather than after a poll.
        if (inHand.size === Math.floor(maxInHand / 2)) nudge();
      });
      inHand.add(work);
    };

    const loop = (async () => {
      let failures = 0;
      while (running) {
        const room = maxInHand - inHand.size;
        // Take a batch when at least half the room is free: one statement per event would not keep up.
        if (room < Math.ceil(maxInHand / 2)) {
          await sleep(pollMs);
          continue;
        }
        let rows: ClaimedRow[];
        try {
          rows = await translateErrors(() => this.#take(room));
          failures = 0;
        } catch (err) {
          failures += 1;
          onError(err);
          await sleep(Math.min(5000, 100 * 2 ** Math.min(failures, 6)));
          continue;
        }
        for (const row of rows) launch(row);
        if (rows.length < room) {
          if (nextRetryAt <= Date.now()) nextRetryAt = Number.POSITIVE_INFINITY;
          await sleep(Math.max(0, Math.min(pollMs, nextRetryAt - Date.now())));
        }
      }
    })();

    return {
      async stop() {
        running = false;
        unsubscribe?.();
        nudge();
        await loop;
        await Promise.all(inHand);
        flush();
        await writing;
      },
    };
  }

  /** One look at the stream: up to `limit` events handed over again, then new ones, as one statement. */
  async #take(limit: number): Promise<ClaimedRow[]> {
    const ackWait = `${this.#options.ackWaitMs} milliseconds`;
    const result = await this.#knex.raw(
      `WITH redelivered AS (
          UPDATE event_consumer_pending p
             SET deliveries = p.deliveries + 1, due_at = now() + :ackWait::interval
            FROM (SELECT stream_seq FROM event_consumer_pending
                   WHERE consumer = :name AND due_at <= now()
                   ORDER BY due_at, stream_seq
                   LIMIT :limit
                   FOR UPDATE SKIP LOCKED) due
           WHERE p.consumer = :name AND p.stream_seq = due.stream_seq
          RETURNING p.stream_seq, p.deliveries),
        consumer AS (
          SELECT c.position FROM event_consumers c
           WHERE c.name = :name AND EXISTS (SELECT 1 FROM events e WHERE e.stream_seq > c.position)
             FOR UPDATE SKIP LOCKED),
        fresh AS (
          SELECT e.stream_seq FROM events e, consumer
           WHERE e.stream_seq > consumer.position
           ORDER BY e.stream_seq
           LIMIT (SELECT :limit - count(*) FROM redelivered)),
        taken AS (
          INSERT INTO event_consumer_pending (consumer, stream_seq, deliveries, due_at)
          SELECT :name, stream_seq, 1, now() + :ackWait::interval FROM fresh
          RETURNING stream_seq, deliveries),
        moved AS (
          UPDATE event_consumers SET position = (SELECT max(stream_seq) FROM taken)
           WHERE name = :name AND EXISTS (SELECT 1 FROM taken))
      SELECT e.*, x.deliveries
        FROM (SELECT stream_seq, deliveries FROM redelivered UNION ALL SELECT stream_seq, deliveries FROM taken) x
        JOIN events e ON e.stream_seq = x.stream_seq
       ORDER BY x.stream_seq`,
      { name: this.#name, limit, ackWait },
    );
    return result.rows as ClaimedRow[];
  }
}

/**
 * Each durable consumer of the event stream in Postgres, with the age in seconds (by Postgres's clock) of
 * the oldest event it has not handled: the first one past its position, or one it has in hand (taken and
 * not settled, or waiting for a retry); 0 when it is up to date.
 */
export async function eventConsumerAgeSeconds(knex: Knex): Promise<{ consumer: string; ageSeconds: number }[]> {
  const result = await knex.raw(
    `SELECT c.name AS consumer,
            COALESCE(EXTRACT(EPOCH FROM now() - LEAST(
              (SELECT min(e.created_at) FROM event_consumer_pending p JOIN events e ON e.stream_seq = p.stream_seq WHERE p.consumer = c.name),
              (SELECT e.created_at FROM events e WHERE e.stream_seq > c.position ORDER BY e.stream_seq LIMIT 1))), 0)::float8 AS age
       FROM event_consumers c
      ORDER BY c.name`,
  );
  return (result.rows as { consumer: string; age: number }[]).map((row) => ({ consumer: row.consumer, ageSeconds: Math.max(0, Number(row.age)) }));
}
