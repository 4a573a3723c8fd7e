import type { Knex } from 'knex';
import type { Claim, ClaimResult, IdempotencyRecord, IdempotencyStore, KeyedRequest, RequestLedger } from '../../ports/idempotency-store.port.ts';
import { translateErrors } from './database.ts';
import { orderToRow, rowToOrder, type OrderRow } from '../../../modules/order/adapters/postgres/order-row.ts';

/** How long keys are kept; a repeat within this window is answered from the record. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

interface IdempotencyRow {
  operation: string;
  fingerprint: string;
  status: 'in_progress' | 'completed';
  response: unknown;
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
      // A key of another operation holds another response (or none yet): only the operation matters then.
      const order = existing.operation === record.operation ? rowToOrder(existing.response as OrderRow) : record.order;
      return { claimed: false, existing: { ...record, operation: existing.operation, fingerprint: existing.fingerprint, order } };
    });
  }
}

/** RequestLedger on Postgres, in the table order creation uses: one key space per merchant and mode. */
export class PostgresRequestLedger implements RequestLedger {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  async claim(request: KeyedRequest): Promise<Claim> {
    const where = { merchant_id: request.scope.merchantId, livemode: request.scope.livemode, key: request.key };
    return translateErrors(async () => {
      // A concurrent claim of the same key waits here until its transaction ends; then this insert conflicts
      // (the other committed: its response is there to replay) or succeeds (it rolled back and took its claim along).
      // A row left without a response by an earlier version's reservation is taken over by the same request.
      const taken = await this.#db.raw<{ rows: unknown[] }>(
        `INSERT INTO idempotency_keys (merchant_id, livemode, key, operation, fingerprint, status, created_at)
         VALUES (?, ?, ?, ?, ?, 'in_progress', now())
         ON CONFLICT (merchant_id, livemode, key) DO UPDATE SET created_at = now()
           WHERE idempotency_keys.response IS NULL
             AND idempotency_keys.operation = excluded.operation AND idempotency_keys.fingerprint = excluded.fingerprint
         RETURNING 1`,
        [where.merchant_id, where.livemode, where.key, request.operation, request.fingerprint],
      );
      if (taken.rows.length > 0) return { kind: 'claimed' };
      const existing = await this.#db<IdempotencyRow>('idempotency_keys').select('operation', 'fingerprint', 'status', 'response').where(where).first();
      if (!existing) return this.claim(request); // purged meanwhile
      if (existing.operation !== request.operation || existing.fingerprint !== request.fingerprint) return { kind: 'mismatch', operation: existing.operation };
      return { kind: 'replay', response: existing.response };
    });
  }

  async complete(request: KeyedRequest, resourceId: string, response: unknown): Promise<void> {
    await translateErrors(() =>
      this.#db('idempotency_keys')
        .where({ merchant_id: request.scope.merchantId, livemode: request.scope.livemode, key: request.key })
        .update({ status: 'completed', resource_id: resourceId, response: JSON.stringify(response) }),
    );
  }
}

/** Deletes keys older than the retention window; answers how many went. */
export async function purgeExpiredIdempotencyKeys(knex: Knex, retentionHours = IDEMPOTENCY_RETENTION_HOURS): Promise<number> {
  return translateErrors(() =>
    knex('idempotency_keys').where('created_at', '<', knex.raw(`now() - make_interval(hours => ?)`, [retentionHours])).delete(),
  );
}
