import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Checkout } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { OrderStatus } from '../../src/gen/checkout/v1/order_pb.ts';
import type { PageContext } from './layout.ts';
import { renderExpiredPage } from './notice-pages.ts';
import { renderPaymentPage } from './payment-page.ts';
import { renderReceiptPage } from './receipt-page.ts';

/** Which page a checkout gets. */
export type CheckoutView = 'receipt' | 'expired' | 'payment';

/**
 * Paid (a receipt, or status PAID or AUTHORIZED) wins over everything, so a paid order
 * never shows a second payment form; then closed (status EXPIRED or VOIDED, or
 * its expiry passed before the core noticed); otherwise the payment page.
 */
export function checkoutView(checkout: Checkout, now: Date): CheckoutView {
  const status = checkout.order?.status;
  // An authorized order (manual capture) was paid by the customer too: its receipt says it is not charged yet.
  if (checkout.receipt || status === OrderStatus.PAID || status === OrderStatus.AUTHORIZED || status === OrderStatus.PARTIALLY_REFUNDED || status === OrderStatus.REFUNDED) return 'receipt';
  // A voided order takes no payment: its page is closed, as an expired one's.
  if (status === OrderStatus.EXPIRED || status === OrderStatus.VOIDED) return 'expired';
  const expiresAt = checkout.expiresAt ?? checkout.order?.expiresAt;
  if (expiresAt && timestampDate(expiresAt).getTime() <= now.getTime()) return 'expired';
  return 'payment';
}

/** Renders the HTML document of a checkout: receipt, expired page or payment page. */
export function renderCheckout(checkout: Checkout, ctx: PageContext): string {
  switch (checkoutView(checkout, ctx.now)) {
    case 'receipt':
      return renderReceiptPage(checkout, ctx);
    case 'expired':
      return renderExpiredPage(checkout, ctx);
    case 'payment':
      return renderPaymentPage(checkout, ctx);
  }
}
