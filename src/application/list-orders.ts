import type { Scope } from '../domain/merchant/caller.ts';
import { invalid } from '../domain/shared/domain-error.ts';
import type { OrderPage, OrderRepository } from '../ports/order-repository.port.ts';

/** Default and largest page sizes of order lists. */
export const DEFAULT_LIST_LIMIT = 10;
export const MAX_LIST_LIMIT = 100;

/** Lists the caller's orders newest first. */
export type ListOrdersUseCase = (scope: Scope, query: { limit: number | undefined; startingAfter: string | undefined; reference: string | undefined }) => Promise<OrderPage>;

/** Creates the order-listing use case. */
export function createListOrders(deps: { readonly orders: OrderRepository }): ListOrdersUseCase {
  return async (scope, query) => {
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw invalid('list.limit_invalid', 'limit', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`);
    }
    return deps.orders.list(scope, { limit, startingAfter: query.startingAfter, reference: query.reference });
  };
}
