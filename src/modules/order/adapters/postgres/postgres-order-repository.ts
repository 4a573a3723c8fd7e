import { ConflictError, UnknownCursorError } from '../../../../kernel/ports/errors.ts';
import type { Knex } from 'knex';
import type { Order } from '../../domain/order.entity.ts';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { OrderListQuery, OrderPage, OrderRepository } from '../../ports/order-repository.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import { rowToOrder, type OrderRow } from './order-row.ts';

/** OrderRepository on Postgres; pass a transaction to take part in one. */
export class PostgresOrderRepository implements OrderRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  async findById(scope: Scope, id: string): Promise<Order | undefined> {
    const row = await translateErrors(() =>
      this.#db<OrderRow>('orders').where({ id, merchant_id: scope.merchantId, livemode: scope.livemode }).first(),
    );
    return row ? rowToOrder(row) : undefined;
  }

  async list(scope: Scope, query: OrderListQuery): Promise<OrderPage> {
    return translateErrors(async () => {
      const q = this.#db<OrderRow>('orders')
        .where({ merchant_id: scope.merchantId, livemode: scope.livemode })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(query.limit + 1);
      if (query.reference !== undefined) q.andWhere('reference', query.reference);
      if (query.paymentLinkId !== undefined) q.andWhere('payment_link_id', query.paymentLinkId);
      if (query.startingAfter !== undefined) {
        const cursor = await this.#db<OrderRow>('orders')
          .select('created_at', 'id')
          .where({ id: query.startingAfter, merchant_id: scope.merchantId, livemode: scope.livemode })
          .first();
        if (!cursor) {
          throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not one of your orders in this mode.`);
        }
        q.andWhereRaw('(created_at, id) < (?, ?)', [cursor.created_at, cursor.id]);
      }
      const rows = await q;
      return { orders: rows.slice(0, query.limit).map(rowToOrder), hasMore: rows.length > query.limit };
    });
  }

  async findForCheckout(id: string): Promise<Order | undefined> {
    const row = await translateErrors(() => this.#db<OrderRow>('orders').where({ id }).first());
    return row ? rowToOrder(row) : undefined;
  }

  async lock(id: string): Promise<Order | undefined> {
    const row = await translateErrors(() => this.#db<OrderRow>('orders').where({ id }).forUpdate().first());
    return row ? rowToOrder(row) : undefined;
  }

  async saveTransition(order: Order): Promise<void> {
    const updated = await translateErrors(() =>
      this.#db('orders')
        .where({ id: order.id, version: order.version - 1 })
        .update({
          status: order.status,
          method: order.method,
          settlement_currency: order.settlement?.currency ?? null,
          settlement_amount: order.settlement?.amount.toString() ?? null,
          amount_refunded: order.amountRefunded.toString(),
          amount_captured: order.amountCaptured?.toString() ?? null,
          authorization_expires_at: order.authorizationExpiresAt,
          version: order.version,
          updated_at: new Date(),
        }),
    );
    // Another request moved the order on first: the transition was computed from a stale version.
    if (updated !== 1) throw new ConflictError(`The order ${order.id} changed while this request ran.`);
  }

  async lockDueToExpire(now: Date, limit: number): Promise<Order[]> {
    const rows = await translateErrors(() =>
      this.#db<OrderRow>('orders')
        .whereIn('status', ['pending', 'failed'])
        .andWhere('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    );
    return rows.map(rowToOrder);
  }

  async lockAuthorizationsDue(now: Date, limit: number): Promise<Order[]> {
    const rows = await translateErrors(() =>
      this.#db<OrderRow>('orders')
        .where('status', 'authorized')
        .andWhere('authorization_expires_at', '<=', now)
        // A capture asked before the authorization ran out is finished, not released.
        .whereRaw('NOT EXISTS (SELECT 1 FROM capture_requests c WHERE c.order_id = orders.id)')
        .orderBy('authorization_expires_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    );
    return rows.map(rowToOrder);
  }
}
