import { UnknownCursorError } from '../../../../kernel/ports/errors.ts';
import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/domain-event.ts';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { EventLog, EventQuery } from '../../ports/event-log.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import { rowToEvent, type EventRow } from './postgres-event-outbox.ts';

/** The event log, read from the outbox table. */
export class PostgresEventLog implements EventLog {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  list(scope: Scope, query: EventQuery): Promise<{ events: DomainEvent[]; hasMore: boolean }> {
    return translateErrors(async () => {
      const where = { merchant_id: scope.merchantId, livemode: scope.livemode };
      const q = this.#knex<EventRow>('events')
        .where(where)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'seq', order: 'desc' },
        ])
        .limit(query.limit + 1);
      if (query.type !== undefined) q.andWhere('type', query.type);
      if (query.orderId !== undefined) q.andWhere('order_id', query.orderId);
      if (query.reference !== undefined) q.andWhere('reference', query.reference);
      if (query.startingAfter !== undefined) {
        const cursor = await this.#knex('events').where({ ...where, id: query.startingAfter }).first<{ created_at: Date; seq: string } | undefined>('created_at', 'seq');
        if (!cursor) throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not one of your events in this mode.`);
        q.andWhereRaw('(created_at, seq) < (?, ?)', [cursor.created_at, cursor.seq]);
      }
      const rows = await q;
      return { events: rows.slice(0, query.limit).map(rowToEvent), hasMore: rows.length > query.limit };
    });
  }

  async findById(scope: Scope, id: string): Promise<DomainEvent | undefined> {
    const row = await translateErrors(() => this.#knex<EventRow>('events').where({ id, merchant_id: scope.merchantId, livemode: scope.livemode }).first());
    return row ? rowToEvent(row) : undefined;
  }
}
