import { EVENT_ID_PREFIX } from '../../domain/event/domain-event.ts';
import { createOrder } from '../../domain/order/create-order.ts';
import { ORDER_ID_PREFIX, type Order } from '../../domain/order/order.entity.ts';
import { takesPayment } from '../../domain/order/order-transitions.ts';
import { linkOrderExpiry, paymentLinkStatus, type PaymentLink, type PaymentLinkStatus } from '../../domain/payment-link/payment-link.entity.ts';
import type { MerchantRecord, MerchantRepository } from '../../ports/merchant/merchant-repository.port.ts';
import type { OrderCreationStore } from '../../ports/order/order-creation-store.port.ts';
import type { OrderRepository } from '../../ports/order/order-repository.port.ts';
import type { PaymentLinkRepository } from '../../ports/payment-link/payment-link-repository.port.ts';
import type { Clock } from '../../ports/shared/clock.port.ts';
import type { IdGenerator } from '../../ports/shared/id-generator.port.ts';
import { ApplicationError } from '../shared/application-error.ts';

/** What opening a link gives: the order to pay, or why the link takes no payment (nothing created). */
export type OpenedLink =
  | { readonly kind: 'order'; readonly order: Order; readonly reused: boolean; readonly link: PaymentLink; readonly merchant: MerchantRecord }
  | { readonly kind: 'closed'; readonly status: Exclude<PaymentLinkStatus, 'active'>; readonly link: PaymentLink; readonly merchant: MerchantRecord };

/** Opens a link by its URL's suffix, reusing the order this browser opened before when it is still open. */
export type OpenPaymentLink = (suffix: string, rememberedOrderId: string | undefined) => Promise<OpenedLink>;

/**
 * Creates the use case behind GET /l/<suffix>. A deactivated, expired or (single-use) completed
 * link is answered closed and nothing is written. Otherwise the order this browser opened from the
 * link before is answered while it still takes payment (so reloading the link does not pile up
 * orders), or a fresh order is created with the link's amount, reference, line items and
 * return_url, the link's id, and an expiry of an hour (or the link's, if sooner), with order.created.
 * @throws ApplicationError payment_link.not_found for a suffix no link has
 */
export function createOpenPaymentLink(deps: {
  readonly links: PaymentLinkRepository;
  readonly orders: OrderRepository;
  readonly store: OrderCreationStore;
  readonly merchants: MerchantRepository;
  readonly ids: IdGenerator;
  readonly clock: Clock;
}): OpenPaymentLink {
  return async (suffix, rememberedOrderId) => {
    const link = await deps.links.findBySuffix(suffix);
    if (!link) throw new ApplicationError('payment_link.not_found', 'No such payment link.');
    const merchant = await deps.merchants.findById(link.merchantId);
    if (!merchant) throw new Error(`merchant ${link.merchantId} of payment link ${link.id} not found`);
    const now = deps.clock.now();
    const status = paymentLinkStatus(link, now);
    if (status !== 'active') return { kind: 'closed', status, link, merchant };
    if (rememberedOrderId !== undefined) {
      const remembered = await deps.orders.findForCheckout(rememberedOrderId);
      if (remembered && remembered.paymentLinkId === link.id && takesPayment(remembered) && remembered.expiresAt.getTime() > now.getTime()) {
        return { kind: 'order', order: remembered, reused: true, link, merchant };
      }
    }
    const { order, event } = createOrder(
      { amount: link.amount, currency: link.currency, reference: link.reference, lineItems: link.lineItems, returnUrl: link.returnUrl ?? undefined, expiresAt: linkOrderExpiry(link, now) },
      {
        orderId: deps.ids.newId(ORDER_ID_PREFIX),
        eventId: deps.ids.newId(EVENT_ID_PREFIX),
        merchantId: link.merchantId,
        livemode: link.livemode,
        checkoutHost: merchant.checkoutHost,
        checkoutToken: deps.ids.newSecret(''),
        now,
        paymentLinkId: link.id,
      },
    );
    await deps.store.create(undefined, order, event);
    return { kind: 'order', order, reused: false, link, merchant };
  };
}
