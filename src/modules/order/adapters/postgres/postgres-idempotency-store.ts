import type { Knex } from 'knex';
import type { ClaimResult, IdempotencyRecord, IdempotencyStore } from '../../ports/order-idempotency.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import type { IdempotencyRow } from '../../../../kernel/adapters/postgres/postgres-request-ledger.ts';
import { orderToRow, rowToOrder, type OrderRow } from './order-row.ts';

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
      // A key of another operation holds another response (or none yet): only the operation matters then.
      const order = existing.operation === record.operation ? rowToOrder(existing.response as OrderRow) : record.order;
      return { claimed: false, existing: { ...record, operation: existing.operation, fingerprint: existing.fingerprint, order } };
    });
  }
}
