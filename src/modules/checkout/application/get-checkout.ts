import { isDueToExpire } from '../../order/domain/order-transitions.ts';
import { orderIdOfCheckout } from '../../order/domain/order.entity.ts';
import type { OrderRepository } from '../../order/ports/order-repository.port.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';
import type { AcquirerRelease } from '../../payment/application/acquirer-release.ts';
import { attemptsOf } from '../../payment/application/attempts-of.ts';
import type { MerchantCache } from '../../payment/application/merchant-cache.ts';
import type { OrderExpiry } from '../../payment/application/order-expiry.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { authorizeCheckout, type CheckoutCredential } from './checkout-authorization.ts';
import type { CheckoutCards } from './checkout-cards.ts';
import { checkoutView, type CheckoutView } from './checkout-view.ts';

/**
 * Loads the checkout (expiring it first if its time has come). With a credential (an app's key and
 * client secret), only when it authorizes the order; without, as the hosted page does by its id.
 * @throws ApplicationError checkout.not_found; what authorizeCheckout refuses
 */
export type GetCheckout = (checkoutId: string, credential?: CheckoutCredential) => Promise<CheckoutView>;

/** What loading a checkout reads. */
export interface GetCheckoutDeps {
  readonly reads: { readonly orders: Pick<OrderRepository, 'findForCheckout'>; readonly payments: Pick<PaymentRepository, 'listAttemptsForOrders'> };
  readonly clock: Clock;
  readonly merchants: Pick<MerchantCache, 'merchantOf'>;
  readonly release: Pick<AcquirerRelease, 'inTransaction'>;
  readonly expiry: Pick<OrderExpiry, 'expireIfDue'>;
  readonly cards: Pick<CheckoutCards, 'withCards'>;
}

/** Creates the checkout's read. */
export function createGetCheckout(deps: GetCheckoutDeps): GetCheckout {
  return async (checkoutId, credential) => {
    const orderId = orderIdOfCheckout(checkoutId);
    let order = await deps.reads.orders.findForCheckout(orderId);
    if (order && isDueToExpire(order, deps.clock.now())) {
      order = await deps.release.inTransaction(async (tx, release) => {
        const locked = await tx.orders.lock(orderId);
        return locked ? deps.expiry.expireIfDue(tx, locked, release) : undefined;
      });
    }
    if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
    if (credential) authorizeCheckout(order, credential, deps.clock.now());
    return deps.cards.withCards(checkoutView(order, await attemptsOf(deps.reads.payments, orderId), await deps.merchants.merchantOf(order.merchantId)));
  };
}
