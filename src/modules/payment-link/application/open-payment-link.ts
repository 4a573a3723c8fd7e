import { paymentLinkStatus, type PaymentLink, type PaymentLinkStatus } from '../domain/payment-link.entity.ts';
import type { MerchantRecord, MerchantRepository } from '../../merchant/ports/merchant-repository.port.ts';
import type { PaymentLinkRepository } from '../ports/payment-link-repository.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';

/** What opening a link shows: the link's payment form, or why the link takes no payment. Nothing is written either way. */
export type OpenedLink =
  | { readonly kind: 'active'; readonly link: PaymentLink; readonly merchant: MerchantRecord }
  | { readonly kind: 'closed'; readonly status: Exclude<PaymentLinkStatus, 'active'>; readonly link: PaymentLink; readonly merchant: MerchantRecord };

/** Reads a link by its URL's suffix, for its page. */
export type OpenPaymentLink = (suffix: string) => Promise<OpenedLink>;

/** The link behind a suffix, with its merchant. @throws ApplicationError payment_link.not_found */
export async function linkBySuffix(deps: { readonly links: PaymentLinkRepository; readonly merchants: MerchantRepository }, suffix: string): Promise<{ link: PaymentLink; merchant: MerchantRecord }> {
  const link = await deps.links.findBySuffix(suffix);
  if (!link) throw new ApplicationError('payment_link.not_found', 'No such payment link.');
  const merchant = await deps.merchants.findById(link.merchantId);
  if (!merchant) throw new Error(`merchant ${link.merchantId} of payment link ${link.id} not found`);
  return { link, merchant };
}

/**
 * Creates the use case behind GET /l/<suffix>. It only reads: a deactivated, expired or
 * (single-use) completed link is answered closed; an active one is answered with what its page
 * shows, the payment form for the link itself. No order exists until the customer starts to pay
 * (StartPayment, start-link-payment.ts), so a visitor who only opens the link (a crawler, a link
 * preview, a flood) creates no order and no order.created webhook.
 * @throws ApplicationError payment_link.not_found for a suffix no link has
 */
export function createOpenPaymentLink(deps: { readonly links: PaymentLinkRepository; readonly merchants: MerchantRepository; readonly clock: Clock }): OpenPaymentLink {
  return async (suffix) => {
    const { link, merchant } = await linkBySuffix(deps, suffix);
    const status = paymentLinkStatus(link, deps.clock.now());
    if (status !== 'active') return { kind: 'closed', status, link, merchant };
    return { kind: 'active', link, merchant };
  };
}
