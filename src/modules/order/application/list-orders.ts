import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import type { OrderRepository } from '../ports/order-repository.port.ts';
import type { RefundRepository } from '../../refund/ports/refund-repository.port.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';
import type { OrderDetails } from './get-order.ts';
import type { DisputeRepository } from '../../dispute/ports/dispute-repository.port.ts';

/** Default and largest page sizes of order lists. */
export const DEFAULT_LIST_LIMIT = 10;
export const MAX_LIST_LIMIT = 100;

/** Lists the caller's orders newest first. */
export type ListOrdersUseCase = (
  scope: Scope,
  query: { limit: number | undefined; startingAfter: string | undefined; reference: string | undefined; paymentLinkId?: string | undefined },
) => Promise<{ orders: OrderDetails[]; hasMore: boolean }>;

/** Creates the order-listing use case. */
export function createListOrders(deps: {
  readonly orders: OrderRepository;
  readonly payments: PaymentRepository;
  readonly refunds: RefundRepository;
  readonly disputes: DisputeRepository;
}): ListOrdersUseCase {
  return async (scope, query) => {
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw new ApplicationError('list.limit_invalid', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`, 'limit');
    }
    const page = await deps.orders.list(scope, { limit, startingAfter: query.startingAfter, reference: query.reference, paymentLinkId: query.paymentLinkId });
    const attempts = await deps.payments.listAttemptsForOrders(page.orders.map((order) => order.id));
    const paid = page.orders.filter((order) => order.status === 'paid' || order.amountRefunded > 0n).map((order) => order.id);
    const refunds = await deps.refunds.listForOrders(paid);
    const disputes = await deps.disputes.listForOrders(page.orders.filter((order) => order.method !== null).map((order) => order.id));
    return {
      orders: page.orders.map((order) => ({ order, attempts: attempts.get(order.id) ?? [], refunds: refunds.get(order.id) ?? [], disputes: disputes.get(order.id) ?? [] })),
      hasMore: page.hasMore,
    };
  };
}
