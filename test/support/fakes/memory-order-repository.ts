import type { DomainEvent } from '../../../src/modules/event/domain/domain-event.ts';
import type { Scope } from '../../../src/kernel/domain/caller.ts';
import type { Order } from '../../../src/modules/order/domain/order.entity.ts';
import type { ClaimResult, IdempotencyRecord } from '../../../src/modules/order/ports/order-idempotency.port.ts';
import type { OrderCreationStore } from '../../../src/modules/order/ports/order-creation-store.port.ts';
import type { OrderListQuery, OrderPage, OrderRepository } from '../../../src/modules/order/ports/order-repository.port.ts';
import { ConflictError, UnknownCursorError } from '../../../src/kernel/ports/errors.ts';
import { asStored } from '../builders.ts';
import { appendEvent } from './memory-event-outbox.ts';
import { claimOrderKey } from './memory-request-ledger.ts';
import type { MemoryTables, TablesRef } from './memory-tables.ts';

const inScope = (order: Order, scope: Scope) => order.merchantId === scope.merchantId && order.livemode === scope.livemode;
/** created_at, then id, newest first: the orders list's order. */
const newestFirst = (a: Order, b: Order) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** Stores a new order row; the order's merchant must exist (the foreign key). */
export function insertOrder(tables: MemoryTables, order: Order): void {
  if (tables.orders.has(order.id)) throw new ConflictError(`order ${order.id} exists`);
  if (!tables.merchants.has(order.merchantId)) throw new Error(`insert of order ${order.id}: no merchant ${order.merchantId} (foreign key)`);
  tables.orders.set(order.id, { order: asStored(order), refundPending: 0n, disputed: 0n });
}

/** OrderRepository in memory: locks are the unit of work's (one transaction at a time). */
export class MemoryOrderRepository implements OrderRepository {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async findById(scope: Scope, id: string): Promise<Order | undefined> {
    const order = this.#tables().orders.get(id)?.order;
    return order && inScope(order, scope) ? order : undefined;
  }

  async list(scope: Scope, query: OrderListQuery): Promise<OrderPage> {
    let orders = [...this.#tables().orders.values()].map((row) => row.order).filter((o) => inScope(o, scope));
    orders.sort(newestFirst);
    if (query.reference !== undefined) orders = orders.filter((o) => o.reference === query.reference);
    if (query.paymentLinkId !== undefined) orders = orders.filter((o) => (o.paymentLinkId ?? null) === query.paymentLinkId);
    if (query.startingAfter !== undefined) {
      const cursor = await this.findById(scope, query.startingAfter);
      if (!cursor) throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not one of your orders in this mode.`);
      orders = orders.filter((o) => newestFirst(cursor, o) < 0);
    }
    return { orders: orders.slice(0, query.limit), hasMore: orders.length > query.limit };
  }

  async findForCheckout(id: string): Promise<Order | undefined> {
    return this.#tables().orders.get(id)?.order;
  }

  async lock(id: string): Promise<Order | undefined> {
    return this.findForCheckout(id);
  }

  async saveTransition(order: Order): Promise<void> {
    const tables = this.#tables();
    const row = tables.orders.get(order.id);
    if (!row || row.order.version !== order.version - 1) throw new ConflictError(`The order ${order.id} changed while this request ran.`);
    const captured = order.amountCaptured ?? order.amount;
    // orders_refunds_within_amount, as the table checks it.
    if (order.amountRefunded < 0n || order.amountRefunded + row.refundPending > captured) {
      throw new Error(`orders_refunds_within_amount: ${order.amountRefunded} refunded + ${row.refundPending} pending > ${captured}`);
    }
    // Only what a transition may change; the rest stays as stored.
    const saved: Order = {
      ...row.order,
      status: order.status,
      method: order.method,
      settlement: order.settlement,
      amountRefunded: order.amountRefunded,
      amountCaptured: order.amountCaptured,
      authorizationExpiresAt: order.authorizationExpiresAt,
      version: order.version,
    };
    tables.orders.set(order.id, { ...row, order: saved });
  }

  async lockDueToExpire(now: Date, limit: number): Promise<Order[]> {
    return [...this.#tables().orders.values()]
      .map((row) => row.order)
      .filter((o) => (o.status === 'pending' || o.status === 'failed') && o.expiresAt.getTime() <= now.getTime())
      .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
      .slice(0, limit);
  }

  async lockAuthorizationsDue(now: Date, limit: number): Promise<Order[]> {
    const tables = this.#tables();
    return [...tables.orders.values()]
      .map((row) => row.order)
      .filter((o) => o.status === 'authorized' && o.authorizationExpiresAt !== null && o.authorizationExpiresAt.getTime() <= now.getTime() && !tables.captures.has(o.id))
      .sort((a, b) => a.authorizationExpiresAt!.getTime() - b.authorizationExpiresAt!.getTime())
      .slice(0, limit);
  }
}

/** OrderCreationStore in memory: the key, the order and its event, all or nothing. */
export class MemoryOrderCreationStore implements OrderCreationStore {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async create(claim: IdempotencyRecord | undefined, order: Order, event: DomainEvent): Promise<ClaimResult> {
    const tables = this.#tables();
    // One statement in Postgres: nothing is written unless all of it can be.
    if (tables.orders.has(order.id)) throw new ConflictError(`order ${order.id} exists`);
    if (!tables.merchants.has(order.merchantId)) throw new Error(`insert of order ${order.id}: no merchant ${order.merchantId} (foreign key)`);
    if (claim) {
      const held = claimOrderKey(tables, claim);
      if (!held.claimed) return held;
    }
    insertOrder(tables, order);
    appendEvent(tables, event);
    return { claimed: true };
  }
}
