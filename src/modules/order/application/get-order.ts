import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { Order } from '../domain/order.entity.ts';
import type { PaymentAttempt } from '../../payment/domain/payment-attempt.entity.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import type { OrderRepository } from '../ports/order-repository.port.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';
import type { Refund } from '../../refund/domain/refund.entity.ts';
import type { RefundRepository } from '../../refund/ports/refund-repository.port.ts';
import type { Dispute } from '../../dispute/domain/dispute.entity.ts';
import type { DisputeRepository } from '../../dispute/ports/dispute-repository.port.ts';

/** An order with its payment attempts and its refunds, oldest first. */
export interface OrderDetails {
  readonly order: Order;
  readonly attempts: readonly PaymentAttempt[];
  readonly refunds: readonly Refund[];
  /** Its disputes, oldest first (absent where the caller did not read them). */
  readonly disputes?: readonly Dispute[];
}

/** Reads one order of the caller's merchant and mode. */
export type GetOrderUseCase = (scope: Scope, id: string) => Promise<OrderDetails>;

/**
 * Creates the order-retrieval use case. Another merchant's or mode's id is
 * answered exactly like an unknown one.
 */
export function createGetOrder(deps: {
  readonly orders: OrderRepository;
  readonly payments: PaymentRepository;
  readonly refunds: RefundRepository;
  readonly disputes: DisputeRepository;
}): GetOrderUseCase {
  return async (scope, id) => {
    const order = await deps.orders.findById(scope, id);
    if (!order) throw new ApplicationError('order.not_found', `No such order: "${id}".`, 'id');
    const attempts = (await deps.payments.listAttemptsForOrders([order.id])).get(order.id) ?? [];
    // An order that was never paid has no refunds: no query for it.
    const refunds = order.amountRefunded > 0n || order.status === 'paid' ? await deps.refunds.listForOrder(order.id) : [];
    const disputes = order.method !== null ? ((await deps.disputes.listForOrders([order.id])).get(order.id) ?? []) : [];
    return { order, attempts, refunds, disputes };
  };
}
