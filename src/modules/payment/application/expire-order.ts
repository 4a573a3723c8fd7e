import type { Order } from '../../order/domain/order.entity.ts';
import { takesPayment } from '../../order/domain/order-transitions.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import { isInFlight } from '../domain/attempt-policy.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import type { AfterCommit, TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { AcquirerRelease } from './acquirer-release.ts';
import { attemptsOf } from './attempts-of.ts';
import type { OrderExpiry } from './order-expiry.ts';

/**
 * Closes an open order now (Stripe's "expire a Checkout Session"), in the caller's transaction
 * (what it releases at an acquirer is released after that transaction commits): answers the order, expired.
 * @throws ApplicationError order.not_found; DomainError expire.order_not_open, checkout.payment_in_progress
 */
export type ExpireOrder = (tx: TransactionScope, scope: Scope, orderId: string, afterCommit: AfterCommit) => Promise<Order>;

/**
 * Creates the expiry on request. Under the order's row lock, as the sweeper does: an expired order
 * is answered as it is (no second event); an open one (pending, or failed: its customer may still
 * pay) becomes expired through the sweeper's own path (order.expired in this transaction, an open
 * 3-D Secure challenge canceled, which also frees a single-use link's reservation, its
 * authorization released once the transaction commits); a card payment in flight refuses it (the
 * payment decides, as for the sweeper); any other state is not open and refuses it.
 */
export function createExpireOrder(deps: { readonly clock: Clock; readonly release: Pick<AcquirerRelease, 'releaseAfter'>; readonly expiry: Pick<OrderExpiry, 'expire'> }): ExpireOrder {
  return async (tx, scope, orderId, afterCommit) => {
    const found = await tx.orders.findById(scope, orderId);
    if (!found) throw new ApplicationError('order.not_found', `No such order: "${orderId}".`, 'id');
    const order = (await tx.orders.lock(found.id))!;
    if (order.status === 'expired') return order;
    if (!takesPayment(order)) {
      throw new DomainError('expire.order_not_open', `Order ${order.id} is ${order.status}: only an open (pending or failed) order can be expired. ${hintFor(order)}`);
    }
    const now = deps.clock.now();
    if ((await attemptsOf(tx.payments, order.id)).some((a) => isInFlight(a, now))) {
      throw new DomainError('checkout.payment_in_progress', `A card payment for order ${order.id} is being processed; retry once it has finished (it may pay the order).`);
    }
    return deps.expiry.expire(tx, order, deps.release.releaseAfter(afterCommit));
  };
}

function hintFor(order: Order): string {
  switch (order.status) {
    case 'authorized':
      return 'Void it to release the authorization.';
    case 'paid':
      return 'Its customer paid: void or refund it instead.';
    default:
      return 'Nothing is left to close.';
  }
}
