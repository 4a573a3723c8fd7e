import type { Order } from '../domain/order/order.entity.ts';
import type { Scope } from '../domain/merchant/caller.ts';
import { DomainError } from '../domain/shared/domain-error.ts';
import type { OrderRepository } from '../ports/order-repository.port.ts';

/** Reads one order of the caller's merchant and mode. */
export type GetOrderUseCase = (scope: Scope, id: string) => Promise<Order>;

/**
 * Creates the order-retrieval use case. Another merchant's or mode's id is
 * answered exactly like an unknown one.
 */
export function createGetOrder(deps: { readonly orders: OrderRepository }): GetOrderUseCase {
  return async (scope, id) => {
    const order = await deps.orders.findById(scope, id);
    if (!order) throw new DomainError('order.not_found', `No such order: "${id}".`, 'id');
    return order;
  };
}
