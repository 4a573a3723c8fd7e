import { timestampDate } from '@bufbuild/protobuf/wkt';
import { PaymentMethod, type Checkout } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { OrderStatus } from '../../src/gen/checkout/v1/order_pb.ts';
import { renderBankTransferPanel, renderBankTransferStartPanel } from './bank-transfer-panel.ts';
import { renderCardForm } from './card-form.ts';
import { renderChallengeDialog } from './challenge-dialog.ts';
import { formatDateTime, formatMoney } from './format.ts';
import { html, interpolate } from './html.ts';
import { attemptsText, fewAttemptsLeft, fill } from './i18n.ts';
import { merchantName, renderDocument, type PageContext } from './layout.ts';
import { renderOrderSummary } from './order-summary.ts';
import { renderWalletPanel } from './wallet-panel.ts';
import { renderSavedCardsPanel } from './saved-cards-panel.ts';

/**
 * The page of an unpaid order: summary, the last failure (status FAILED)
 * with the attempts left when few are, then one panel per method the merchant switched
 * on. The card form and wallet need the script; the page carries what the
 * script needs (checkout id, checkout token, client messages) in data attributes.
 * With `link` (a payment link's suffix), the page of a link before any order
 * exists: no checkout id or token, the suffix instead (the script starts the
 * order at the first Pay), and a button for the bank transfer's details.
 */
export function renderPaymentPage(checkout: Checkout, ctx: PageContext, link?: string): string {
  const m = ctx.messages;
  const order = checkout.order;
  const merchant = merchantName(checkout, ctx);
  const total = formatMoney(order?.amount ?? 0n, order?.currency ?? '', ctx.locale.locale);
  const failed = order?.status === OrderStatus.FAILED;
  // attempts_remaining has no presence in proto3: trust a 0 only after a failure.
  const exhausted = failed && checkout.attemptsRemaining <= 0;
  const methods = new Set(checkout.methods);
  const card = methods.has(PaymentMethod.CARD);
  const wallet = methods.has(PaymentMethod.WALLET) && checkout.testMode;
  const bank = methods.has(PaymentMethod.BANK_TRANSFER) ? checkout.bankTransfer : undefined;
  const bankStart = link !== undefined && methods.has(PaymentMethod.BANK_TRANSFER);
  const interactive = (card || wallet || bankStart) && !exhausted;
  const expiresAt = checkout.expiresAt ?? order?.expiresAt;
  const expiresAtDate = expiresAt && timestampDate(expiresAt);
  // The decline in the customer's language, as the script shows it; the core's (English) message for codes the catalogue lacks.
  const declines: Readonly<Record<string, string>> = m.client.decline;
  const lastFailure = (Object.hasOwn(declines, checkout.lastFailureCode) && declines[checkout.lastFailureCode]) || checkout.lastFailureMessage;
  // The attempts left only when few are: the limit is against card testing, not news to most shoppers.
  const attemptsLine = exhausted ? m.attemptsNone : fewAttemptsLeft(checkout.attemptsRemaining) ? attemptsText(ctx.locale.language, checkout.attemptsRemaining) : '';

  const main = html`<main id="checkout" data-checkout-id="${checkout.checkoutId}" data-token="${interactive ? checkout.checkoutToken : ''}"${link !== undefined && interactive && html` data-link="${link}"`} data-messages="${interactive ? JSON.stringify(m.client) : ''}">
<h1>${fill(m.payMerchant, { merchant })}</h1>
${renderOrderSummary(order, ctx)}
${expiresAtDate && html`<p class="muted">${interpolate(m.openUntil, { date: html`<time datetime="${expiresAtDate.toISOString()}" data-local>${formatDateTime(expiresAtDate, ctx.locale.locale)}</time>` })}</p>`}
${failed && html`<div class="notice error" id="last-failure">${lastFailure && html`<p>${fill(m.lastFailure, { message: lastFailure })}</p>`}${attemptsLine && html`<p>${attemptsLine}</p>`}</div>`}
${interactive && html`<noscript><p class="notice">${m.noScript}</p></noscript>`}
${card && !exhausted && checkout.savedCards.length > 0 && renderSavedCardsPanel(checkout.savedCards, ctx, total)}
${card && !exhausted && renderCardForm(ctx, fill(m.pay, { amount: total }), checkout.canSaveCard)}
${wallet && !exhausted && renderWalletPanel(ctx)}
${bank && renderBankTransferPanel(bank, ctx)}
${bankStart && renderBankTransferStartPanel(total, ctx)}
${!card && !wallet && !bank && !bankStart && html`<p class="notice">${fill(m.noMethods, { merchant })}</p>`}
${interactive && renderChallengeDialog(ctx, total, merchant)}
</main>`;
  return renderDocument(ctx, { title: `${fill(m.payMerchant, { merchant })} – ${order?.reference ?? ''}`, main, testMode: checkout.testMode });
}
