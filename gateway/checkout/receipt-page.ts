import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Checkout } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { OrderStatus } from '../../src/gen/checkout/v1/order_pb.ts';
import { formatDateTime, formatMoney } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { fill, type Messages } from './i18n.ts';
import { merchantName, renderDocument, type PageContext } from './layout.ts';
import { safeReturnUrl } from './return-url.ts';

/** Seconds the receipt stays before the script returns the customer to the merchant. */
export const REDIRECT_SECONDS = 10;

const BRANDS: Readonly<Record<string, string>> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
};

/** How the order was paid, in words: "Visa ending in 4242", "Bank transfer", … */
export function paidWith(method: string, brand: string, last4: string, m: Messages): string {
  if (method === 'card' || (!method && last4)) {
    if (!last4) return m.methodCard;
    return fill(m.cardEnding, { brand: BRANDS[brand] ?? (brand || m.methodCard), last4 });
  }
  if (method === 'wallet') return m.methodWallet;
  if (method === 'bank_transfer') return m.methodBankTransfer;
  return method;
}

/** The merchant's return link, with the note and button the script uses for the automatic redirect. */
function returnLink(url: string, merchant: string, m: Messages): SafeHtml {
  return html`<p><a id="return-link" class="button" href="${url}" data-redirect="${REDIRECT_SECONDS}">${fill(m.returnTo, { merchant })}</a></p>
<p id="redirect-status" class="status" role="status" aria-live="polite" data-text="${fill(m.redirectNotice, { merchant, seconds: REDIRECT_SECONDS })}"></p>
<p><button type="button" id="stay" class="secondary" hidden>${m.stay}</button></p>`;
}

/**
 * The receipt of a paid order: what was paid, to whom, how and when, and the way back to the
 * merchant. An authorized order (manual capture) gets the same receipt, saying the payment is
 * authorized and not charged yet. Never a payment form.
 */
export function renderReceiptPage(checkout: Checkout, ctx: PageContext): string {
  const m = ctx.messages;
  const order = checkout.order;
  const receipt = checkout.receipt;
  const merchant = merchantName(checkout, ctx);
  const paidAt = receipt?.paidAt && timestampDate(receipt.paidAt);
  const returnUrl = safeReturnUrl(checkout.returnUrl);
  const authorized = order?.status === OrderStatus.AUTHORIZED;
  const title = authorized ? m.authorizedTitle : m.receiptTitle;
  const main = html`<main id="receipt"${authorized ? html` data-authorized` : ''}>
<h1>${title}</h1>
<p id="receipt-notice">${fill(authorized ? m.authorizedNotice : m.receiptThanks, { merchant })}</p>
<section class="panel" aria-labelledby="receipt-title">
<h2 id="receipt-title" class="visually-hidden">${m.summary}</h2>
<dl class="facts">
<dt>${m.merchant}</dt><dd>${merchant}</dd>
<dt>${m.reference}</dt><dd>${order?.reference}</dd>
<dt>${m.amount}</dt><dd>${formatMoney(order?.amount ?? 0n, order?.currency ?? '', ctx.locale.locale)}</dd>
<dt>${m.paidWith}</dt><dd>${paidWith(receipt?.method || order?.method || '', receipt?.cardBrand ?? '', receipt?.cardLast4 ?? '', m)}</dd>
${paidAt && html`<dt>${authorized ? m.authorizedAt : m.paidAt}</dt><dd><time datetime="${paidAt.toISOString()}" data-local>${formatDateTime(paidAt, ctx.locale.locale)}</time></dd>`}
<dt>${m.orderId}</dt><dd class="mono">${order?.id}</dd>
</dl>
</section>
${returnUrl && returnLink(returnUrl, merchant, m)}
</main>`;
  return renderDocument(ctx, { title: `${title} – ${merchant}`, main, testMode: checkout.testMode });
}
