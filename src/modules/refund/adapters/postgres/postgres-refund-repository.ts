import type { Knex } from 'knex';
import type { Refund, RefundReason, RefundStatus } from '../../domain/refund.entity.ts';
import type { RefundRepository } from '../../ports/refund-repository.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

interface RefundRow {
  id: string;
  order_id: string;
  payment_id: string;
  merchant_id: string;
  livemode: boolean;
  reference: string;
  amount: string;
  currency: string;
  reason: string;
  note: string;
  status: string;
  processor_ref: string | null;
  failure_code: string | null;
  created_at: Date;
}

function fromRow(row: RefundRow): Refund {
  return {
    id: row.id,
    orderId: row.order_id,
    paymentId: row.payment_id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    reference: row.reference,
    amount: BigInt(row.amount),
    currency: row.currency.trim(),
    reason: row.reason as RefundReason,
    note: row.note,
    status: row.status as RefundStatus,
    processorRef: row.processor_ref,
    failureCode: row.failure_code,
    createdAt: new Date(row.created_at),
  };
}

/** RefundRepository on the refunds table and the order's reservation columns (migration 010). */
export class PostgresRefundRepository implements RefundRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  reserve(refund: Refund): Promise<void> {
    return translateErrors(async () => {
      await this.#db('refunds').insert({
        id: refund.id,
        order_id: refund.orderId,
        payment_id: refund.paymentId,
        merchant_id: refund.merchantId,
        livemode: refund.livemode,
        reference: refund.reference,
        amount: refund.amount.toString(),
        currency: refund.currency,
        reason: refund.reason,
        note: refund.note,
        status: refund.status,
        created_at: refund.createdAt,
        updated_at: refund.createdAt,
      });
      await this.#db('orders').where({ id: refund.orderId }).increment('amount_refund_pending', Number(refund.amount));
    });
  }

  async pendingAmount(orderId: string): Promise<bigint> {
    const row = await translateErrors(() => this.#db('orders').where({ id: orderId }).first<{ amount_refund_pending: string } | undefined>('amount_refund_pending'));
    return BigInt(row?.amount_refund_pending ?? '0');
  }

  async lock(refundId: string): Promise<Refund | undefined> {
    const row = await translateErrors(() => this.#db<RefundRow>('refunds').where({ id: refundId }).forUpdate().first());
    return row ? fromRow(row) : undefined;
  }

  markSucceeded(refund: Refund, processorRef: string, now: Date): Promise<void> {
    return this.#settle(refund, { status: 'succeeded', processor_ref: processorRef, updated_at: now });
  }

  markFailed(refund: Refund, failureCode: string, now: Date): Promise<void> {
    return this.#settle(refund, { status: 'failed', failure_code: failureCode, updated_at: now });
  }

  #settle(refund: Refund, changes: Record<string, unknown>): Promise<void> {
    return translateErrors(async () => {
      const updated = await this.#db('refunds').where({ id: refund.id, status: 'pending' }).update(changes);
      if (updated !== 1) throw new Error(`refund ${refund.id} is no longer pending`);
      await this.#db('orders').where({ id: refund.orderId }).decrement('amount_refund_pending', Number(refund.amount));
    });
  }

  async listForOrder(orderId: string): Promise<Refund[]> {
    const rows = await translateErrors(() => this.#db<RefundRow>('refunds').where({ order_id: orderId }).orderBy([{ column: 'created_at' }, { column: 'id' }]));
    return rows.map(fromRow);
  }

  async listForOrders(orderIds: readonly string[]): Promise<Map<string, Refund[]>> {
    const byOrder = new Map<string, Refund[]>();
    if (orderIds.length === 0) return byOrder;
    const rows = await translateErrors(() => this.#db<RefundRow>('refunds').whereIn('order_id', orderIds).orderBy([{ column: 'created_at' }, { column: 'id' }]));
    for (const row of rows) {
      const list = byOrder.get(row.order_id) ?? [];
      list.push(fromRow(row));
      byOrder.set(row.order_id, list);
    }
    return byOrder;
  }

  async claimStale(before: Date, now: Date, limit: number): Promise<string[]> {
    const rows = await translateErrors(() =>
      this.#db.raw<{ rows: { id: string }[] }>(
        `UPDATE refunds SET updated_at = ? WHERE id IN (
           SELECT id FROM refunds WHERE status = 'pending' AND updated_at < ? ORDER BY updated_at LIMIT ? FOR UPDATE SKIP LOCKED
         ) RETURNING id`,
        [now, before, limit],
      ),
    );
    return rows.rows.map((r) => r.id);
  }

  async findById(refundId: string): Promise<Refund | undefined> {
    const row = await translateErrors(() => this.#db<RefundRow>('refunds').where({ id: refundId }).first());
    return row ? fromRow(row) : undefined;
  }
}
