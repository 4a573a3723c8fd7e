import type { Dispute } from '../../../src/modules/dispute/domain/dispute.entity.ts';
import type { Scope } from '../../../src/kernel/domain/caller.ts';
import type { DisputePage, DisputeRepository } from '../../../src/modules/dispute/ports/dispute-repository.port.ts';
import { ConflictError } from '../../../src/kernel/ports/errors.ts';
import { notFaked, type TablesRef } from './memory-tables.ts';

/**
 * The part of DisputeRepository that refunds and voids read (what disputes hold, which orders have
 * one) and that builders write (open); the dispute lifecycle itself is not modelled yet.
 */
export class MemoryDisputeRepository implements DisputeRepository {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async open(dispute: Dispute): Promise<void> {
    const tables = this.#tables();
    if (tables.disputes.has(dispute.id)) throw new ConflictError('The change conflicts with one made at the same time.');
    const row = tables.orders.get(dispute.orderId);
    if (!row) throw new Error(`dispute ${dispute.id}: no order ${dispute.orderId} (foreign key)`);
    tables.disputes.set(dispute.id, dispute);
    // Every dispute opens holding its amount; winning it releases the hold (recordOutcome).
    tables.orders.set(dispute.orderId, { ...row, disputed: row.disputed + dispute.amount });
  }

  async heldAmount(orderId: string): Promise<bigint> {
    return this.#tables().orders.get(orderId)?.disputed ?? 0n;
  }

  async lock(disputeId: string): Promise<Dispute | undefined> {
    return this.#tables().disputes.get(disputeId);
  }

  recordSubmission(): Promise<void> {
    return notFaked('DisputeRepository', 'recordSubmission');
  }

  recordOutcome(): Promise<void> {
    return notFaked('DisputeRepository', 'recordOutcome');
  }

  async get(disputeId: string): Promise<Dispute | undefined> {
    return this.#tables().disputes.get(disputeId);
  }

  async findById(scope: Scope, disputeId: string): Promise<Dispute | undefined> {
    const dispute = this.#tables().disputes.get(disputeId);
    return dispute && dispute.merchantId === scope.merchantId && dispute.livemode === scope.livemode ? dispute : undefined;
  }

  list(): Promise<DisputePage> {
    return notFaked('DisputeRepository', 'list');
  }

  async listForOrders(orderIds: readonly string[]): Promise<Map<string, Dispute[]>> {
    const wanted = new Set(orderIds);
    const byOrder = new Map<string, Dispute[]>();
    const all = [...this.#tables().disputes.values()].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    for (const d of all) if (wanted.has(d.orderId)) byOrder.set(d.orderId, [...(byOrder.get(d.orderId) ?? []), d]);
    return byOrder;
  }

  dueToClose(): Promise<string[]> {
    return notFaked('DisputeRepository', 'dueToClose');
  }

  dueTestCardDisputes(): Promise<string[]> {
    return notFaked('DisputeRepository', 'dueTestCardDisputes');
  }
}
