import type { Knex } from 'knex';
import type { ClaimResult, IdempotencyRecord, IdempotencyStore } from '../../ports/idempotency-store.port.ts';
import { translateErrors } from './database.ts';
import { orderToRow, rowToOrder, type OrderRow } from './order-row.ts';

/** How long keys are kept; a repeat within this window is answered from the record. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

interface IdempotencyRow {
  operation: string;
  fingerprint: string;
  response: OrderRow;
}

/** IdempotencyStore on Postgres: the primary key (merchant, mode, key) decides races. */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  async claim(record: IdempotencyRecord): Promise<ClaimResult> {
    const where = { merchant_id: record.scope.merchantId, livemode: record.scope.livemode, key: record.key };
    return translateErrors(async () => {
      // A concurrent claim of the same key blocks here until its transaction ends,
      // then this insert either conflicts (the other committed) or succeeds (it rolled back).
      const inserted = await this.#db('idempotency_keys')
        .insert({
          ...where,
          operation: record.operation,
          fingerprint: record.fingerprint,
          resource_id: record.order.id,
          response: JSON.stringify(orderToRow(record.order)),
        })
        .onConflict(['merchant_id', 'livemode', 'key'])
        .ignore()
        .returning('key');
      if (inserted.length > 0) return { claimed: true };
      const existing = await this.#db<IdempotencyRow>('idempotency_keys').select('operation', 'fingerprint', 'response').where(where).first();
      if (!existing) return this.claim(record); // purged between the two statements: claim afresh
      return {
        claimed: false,
        existing: { ...record, operation: existing.operation, fingerprint: existing.fingerprint, order: rowToOrder(existing.response) },
      };
    });
  }
}

/** Deletes keys older than the retention window; answers how many went. */
export async function purgeExpiredIdempotencyKeys(knex: Knex, retentionHours = IDEMPOTENCY_RETENTION_HOURS): Promise<number> {
  return translateErrors(() =>
    knex('idempotency_keys').where('created_at', '<', knex.raw(`now() - make_interval(hours => ?)`, [retentionHours])).delete(),
  );
}
