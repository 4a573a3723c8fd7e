import type { Order } from '../domain/order.entity.ts';
import type { Scope } from '../../merchant/domain/caller.ts';

/** A page of orders, newest first. */
export interface OrderPage {
  readonly orders: readonly Order[];
  readonly hasMore: boolean;
}

/** Query for {@link OrderRepository.list}. */
export interface OrderListQuery {
  readonly limit: number;
  /** Order id after which the page starts; must belong to the scope. */
  readonly startingAfter: string | undefined;
  readonly reference: string | undefined;
  /** Only the orders a payment link created. */
  readonly paymentLinkId?: string | undefined;
}

/** Stores orders. Every read is confined to one merchant and mode. */
export interface OrderRepository {
  /** The order with this id in the scope, or undefined (also for other merchants' and modes' ids). */
  findById(scope: Scope, id: string): Promise<Order | undefined>;
  /**
   * Lists orders newest first.
   * @throws UnknownCursorError when startingAfter is not an order of the scope.
   */
  list(scope: Scope, query: OrderListQuery): Promise<OrderPage>;
  /** The order with this id, whoever owns it: for the checkout, which holds the unguessable id. */
  findForCheckout(id: string): Promise<Order | undefined>;
  /** Reads and row-locks an order until the transaction ends; undefined if absent. */
  lock(id: string): Promise<Order | undefined>;
  /**
   * Stores a state change made by a domain transition (status, method,
   * settlement, amounts refunded and captured, authorization expiry, version).
   * @throws ConflictError when the stored version is not the one before it (a lost race).
   */
  saveTransition(order: Order): Promise<void>;
  /** Locks up to limit open orders past their expiry, skipping rows another worker holds. */
  lockDueToExpire(now: Date, limit: number): Promise<Order[]>;
  /** Locks up to limit authorized orders whose authorization ran out by now, skipping rows another worker holds. */
  lockAuthorizationsDue(now: Date, limit: number): Promise<Order[]>;
}
