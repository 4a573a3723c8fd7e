import type { Knex } from 'knex';
import type { DomainEvent, EventType, SubjectType } from '../../domain/domain-event.ts';
import type { EventOutbox, OutboxBatch, OutboxReader } from '../../ports/event-outbox.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/** The events table's row. */
export interface EventRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  type: string;
  subject_type: string;
  subject_id: string;
  order_id: string | null;
  reference: string | null;
  sequence: number;
  data: DomainEvent['data'];
  created_at: Date;
  published_at: Date | null;
}

/** Maps a domain event to the columns it is inserted with (data as JSON text). */
export function eventToRow(event: DomainEvent): Record<string, unknown> {
  return {
    id: event.id,
    merchant_id: event.merchantId,
    livemode: event.livemode,
    type: event.type,
    subject_type: event.subject.type,
    subject_id: event.subject.id,
    order_id: event.orderId,
    reference: event.reference,
    sequence: event.sequence,
    data: JSON.stringify(event.data),
    created_at: event.createdAt,
  };
}

/** Maps an events row to the domain event. */
export function rowToEvent(row: EventRow): DomainEvent {
  return {
    id: row.id,
    type: row.type as EventType,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    subject: { type: row.subject_type as SubjectType, id: row.subject_id },
    orderId: row.order_id,
    reference: row.reference,
    sequence: row.sequence,
    createdAt: row.created_at,
    data: row.data,
  };
}

/** The outbox's writing side, bound to the transaction of the change. */
export class PostgresEventOutbox implements EventOutbox {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  async append(event: DomainEvent): Promise<void> {
    await translateErrors(() => this.#db('events').insert(eventToRow(event)));
  }
}

/** Where the relay puts the events it marks published. */
export interface OutboxReaderOptions {
  /**
   * True when there is no broker (no NATS_URL): marking a batch published appends it to the
   * event stream in Postgres ({@link appendToEventStream}), which the Postgres consumers read.
   */
  readonly appendToStream?: boolean;
}

/** The relay's side: FOR UPDATE SKIP LOCKED so concurrent relays split the work. */
export class PostgresOutboxReader implements OutboxReader {
  readonly #knex: Knex;
  readonly #appendToStream: boolean;

  constructor(knex: Knex, options: OutboxReaderOptions = {}) {
    this.#knex = knex;
    this.#appendToStream = options.appendToStream ?? false;
  }

  withUnpublished<T>(limit: number, fn: (batch: OutboxBatch) => Promise<T>): Promise<T> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        const rows: EventRow[] = await trx('events')
          .whereNull('published_at')
          .orderBy([{ column: 'created_at' }, { column: 'seq' }])
          .limit(limit)
          .forUpdate()
          .skipLocked();
        const ids = rows.map((row) => row.id);
        return fn({
          events: rows.map(rowToEvent),
          markPublished: async () => {
            if (ids.length === 0) return;
            if (this.#appendToStream) await appendToEventStream(trx, ids);
            else await trx('events').whereIn('id', ids).update({ published_at: trx.fn.now() });
          },
        });
      }),
    );
  }
}

/** The channel on which the relay tells the Postgres consumers that the event stream grew. */
export const EVENT_STREAM_CHANNEL = 'checkout_event_stream';

/**
 * Any constant: the key of the transaction-level advisory lock under which stream positions are
 * given. ("checkout" in ASCII.)
 */
const EVENT_STREAM_LOCK = 0x636865636b6f7574n;

/**
 * Appends locked, unpublished events to the event stream in Postgres: each gets the next
 * `stream_seq` and `published_at`, and the stream's listeners a notification at commit.
 *
 * The positions are given under one transaction-level advisory lock, held until this transaction
 * ends: a second relay's batch waits for this one's commit before it takes numbers. So positions
 * become visible in their numeric order, and a consumer that reads position n can never later find
 * a smaller one appearing (as it could with `seq`, numbered at insert by transactions that commit
 * in any order): "everything after my position" is a safe cursor.
 */
export async function appendToEventStream(trx: Knex.Transaction, ids: readonly string[]): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(?::bigint)', [EVENT_STREAM_LOCK.toString()]);
  await trx.raw(
    `UPDATE events e SET published_at = now(), stream_seq = s.position
       FROM (SELECT id, nextval('event_stream_seq') AS position
               FROM (SELECT id FROM unnest(?::text[]) WITH ORDINALITY AS batch (id, n) ORDER BY n) ordered) s
      WHERE e.id = s.id`,
    [[...ids]],
  );
  // Delivered at commit, once per transaction whatever the batch's size.
  await trx.raw('SELECT pg_notify(?, \'\')', [EVENT_STREAM_CHANNEL]);
}

/**
 * Age in seconds of the oldest event not yet published (0 when none), by
 * Postgres's clock: one read of the events_unpublished partial index.
 */
export async function outboxBacklogAgeSeconds(knex: Knex): Promise<number> {
  const result = await knex.raw(`SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS age FROM events WHERE published_at IS NULL`);
  return Math.max(0, Number(result.rows[0].age));
}
