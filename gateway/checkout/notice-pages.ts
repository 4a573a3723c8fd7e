import type { Checkout } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { html } from './html.ts';
import { fill } from './i18n.ts';
import { merchantName, renderDocument, type PageContext } from './layout.ts';
import { safeReturnUrl } from './return-url.ts';

/** The page of an order whose time to pay has run out, with a link back to the merchant when there is one. */
export function renderExpiredPage(checkout: Checkout, ctx: PageContext): string {
  const m = ctx.messages;
  const merchant = merchantName(checkout, ctx);
  const returnUrl = safeReturnUrl(checkout.returnUrl);
  const main = html`<main id="expired">
<h1>${m.expiredTitle}</h1>
<p>${fill(m.expiredBody, { merchant, reference: checkout.order?.reference ?? '' })}</p>
${returnUrl && html`<p><a class="button" href="${returnUrl}">${fill(m.returnTo, { merchant })}</a></p>`}
</main>`;
  return renderDocument(ctx, { title: m.expiredTitle, main, testMode: checkout.testMode });
}

/** The page of an unknown checkout id. */
export function renderNotFoundPage(ctx: PageContext): string {
  const m = ctx.messages;
  const main = html`<main id="not-found">
<h1>${m.notFoundTitle}</h1>
<p>${m.notFoundBody}</p>
</main>`;
  return renderDocument(ctx, { title: m.notFoundTitle, main });
}

/** The page shown when the checkout could not be loaded, with the request id for support. */
export function renderErrorPage(ctx: PageContext, requestId: string): string {
  const m = ctx.messages;
  const main = html`<main id="error">
<h1>${m.errorTitle}</h1>
<p>${m.errorBody}</p>
<p class="muted">${fill(m.errorReference, { id: requestId })}</p>
</main>`;
  return renderDocument(ctx, { title: m.errorTitle, main });
}

/** Why a payment link takes no payment, as its page tells it. */
export type ClosedLinkReason = 'deactivated' | 'expired' | 'completed';

/** The page of a payment link that takes no payment (deactivated, expired, or a single-use link already paid). */
export function renderClosedLinkPage(reason: ClosedLinkReason, link: { readonly merchantName: string; readonly testMode: boolean; readonly returnUrl: string | undefined }, ctx: PageContext): string {
  const m = ctx.messages;
  const merchant = link.merchantName || m.merchant;
  const [title, body] =
    reason === 'deactivated' ? [m.linkDeactivatedTitle, m.linkDeactivatedBody] : reason === 'expired' ? [m.linkExpiredTitle, m.linkExpiredBody] : [m.linkCompletedTitle, m.linkCompletedBody];
  const returnUrl = safeReturnUrl(link.returnUrl);
  const main = html`<main id="link-closed" data-reason="${reason}">
<h1>${title}</h1>
<p>${fill(body, { merchant })}</p>
${returnUrl && html`<p><a class="button" href="${returnUrl}">${fill(m.returnTo, { merchant })}</a></p>`}
</main>`;
  return renderDocument(ctx, { title, main, testMode: link.testMode });
}
