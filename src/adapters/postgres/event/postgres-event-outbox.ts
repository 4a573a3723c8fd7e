import type { Knex } from 'knex';
import type { DomainEvent, EventType, SubjectType } from '../../../domain/event/domain-event.ts';
import type { EventOutbox, OutboxBatch, OutboxReader } from '../../../ports/event/event-outbox.port.ts';
import { translateErrors } from '../database.ts';

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

/** The relay's side: FOR UPDATE SKIP LOCKED so concurrent relays split the work. */
export class PostgresOutboxReader implements OutboxReader {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
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
            if (ids.length > 0) await trx('events').whereIn('id', ids).update({ published_at: trx.fn.now() });
          },
        });
      }),
    );
  }
}

/**
 * Age in seconds of the oldest event not yet published (0 when none), by
 * Postgres's clock: one read of the events_unpublished partial index.
 */
export async function outboxBacklogAgeSeconds(knex: Knex): Promise<number> {
  const result = await knex.raw(`SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS age FROM events WHERE published_at IS NULL`);
  return Math.max(0, Number(result.rows[0].age));
}
