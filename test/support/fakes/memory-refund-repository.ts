import type { Refund } from '../../../src/modules/refund/domain/refund.entity.ts';
import type { RefundRepository } from '../../../src/modules/refund/ports/refund-repository.port.ts';
import { ConflictError } from '../../../src/kernel/ports/errors.ts';
import type { TablesRef } from './memory-tables.ts';

const oldestFirst = (a: Refund, b: Refund) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const strip = ({ updatedAt: _updatedAt, ...refund }: Refund & { updatedAt: Date }): Refund => refund;

/** RefundRepository in memory, with the order's reservation and its constraint as the tables keep them. */
export class MemoryRefundRepository implements RefundRepository {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async reserve(refund: Refund): Promise<void> {
    const tables = this.#tables();
    if (tables.refunds.has(refund.id)) throw new ConflictError(`refund ${refund.id} exists`);
    const row = tables.orders.get(refund.orderId);
    if (!row) throw new Error(`refund ${refund.id}: no order ${refund.orderId} (foreign key)`);
    if (refund.amount <= 0n) throw new Error('refunds_amount_positive');
    const pending = row.refundPending + refund.amount;
    const captured = row.order.amountCaptured ?? row.order.amount;
    if (row.order.amountRefunded + pending > captured) {
      throw new Error(`orders_refunds_within_amount: ${row.order.amountRefunded} refunded + ${pending} pending > ${captured}`);
    }
    tables.refunds.set(refund.id, { ...refund, updatedAt: refund.createdAt });
    tables.orders.set(refund.orderId, { ...row, refundPending: pending });
  }

  async pendingAmount(orderId: string): Promise<bigint> {
    return this.#tables().orders.get(orderId)?.refundPending ?? 0n;
  }

  async lock(refundId: string): Promise<Refund | undefined> {
    return this.findById(refundId);
  }

  markSucceeded(refund: Refund, processorRef: string, now: Date): Promise<void> {
    return this.#settle(refund, { status: 'succeeded', processorRef }, now);
  }

  markFailed(refund: Refund, failureCode: string, now: Date): Promise<void> {
    return this.#settle(refund, { status: 'failed', failureCode }, now);
  }

  async #settle(refund: Refund, change: Partial<Refund>, now: Date): Promise<void> {
    const tables = this.#tables();
    const stored = tables.refunds.get(refund.id);
    if (!stored || stored.status !== 'pending') throw new Error(`refund ${refund.id} is no longer pending`);
    const row = tables.orders.get(refund.orderId)!;
    tables.refunds.set(refund.id, { ...stored, ...change, updatedAt: now });
    tables.orders.set(refund.orderId, { ...row, refundPending: row.refundPending - refund.amount });
  }

  async listForOrder(orderId: string): Promise<Refund[]> {
    return [...this.#tables().refunds.values()].filter((r) => r.orderId === orderId).sort(oldestFirst).map(strip);
  }

  async listForOrders(orderIds: readonly string[]): Promise<Map<string, Refund[]>> {
    const byOrder = new Map<string, Refund[]>();
    for (const id of orderIds) {
      const refunds = await this.listForOrder(id);
      if (refunds.length > 0) byOrder.set(id, refunds);
    }
    return byOrder;
  }

  async claimStale(before: Date, now: Date, limit: number): Promise<string[]> {
    const tables = this.#tables();
    const stale = [...tables.refunds.values()]
      .filter((r) => r.status === 'pending' && r.updatedAt.getTime() < before.getTime())
      .sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime())
      .slice(0, limit);
    for (const refund of stale) tables.refunds.set(refund.id, { ...refund, updatedAt: now });
    return stale.map((r) => r.id);
  }

  async findById(refundId: string): Promise<Refund | undefined> {
    const stored = this.#tables().refunds.get(refundId);
    return stored && strip(stored);
  }
}
