import type { BankTransferInstructions } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { formatIban, formatMoney } from './format.ts';
import { html, interpolate, type SafeHtml } from './html.ts';
import type { PageContext } from './layout.ts';

/** Where to send a bank transfer: IBAN in groups of four, BIC, holder, amount and the reference to quote. */
export function renderBankTransferPanel(instructions: BankTransferInstructions, ctx: PageContext): SafeHtml {
  const m = ctx.messages;
  const amount = formatMoney(instructions.amount, instructions.currency, ctx.locale.locale);
  return html`<section class="panel" aria-labelledby="bank-title">
<h2 id="bank-title">${m.bankTransfer}</h2>
<p>${interpolate(m.bankIntro, { amount: html`<strong>${amount}</strong>` })}</p>
<dl class="facts">
<dt>${m.iban}</dt><dd class="mono">${formatIban(instructions.iban)}</dd>
<dt>${m.bic}</dt><dd class="mono">${instructions.bic}</dd>
<dt>${m.accountHolder}</dt><dd>${instructions.accountHolder}</dd>
<dt>${m.amount}</dt><dd>${amount}</dd>
<dt>${m.referenceToQuote}</dt><dd class="mono">${instructions.reference}</dd>
</dl>
</section>`;
}

/**
 * A payment link's bank transfer before its order exists: the button creates the order (the
 * script's StartPayment) and opens the order's page, which shows the account and the reference.
 */
export function renderBankTransferStartPanel(amount: string, ctx: PageContext): SafeHtml {
  const m = ctx.messages;
  return html`<section class="panel" aria-labelledby="bank-title">
<h2 id="bank-title">${m.bankTransfer}</h2>
<p>${interpolate(m.bankStartIntro, { amount: html`<strong>${amount}</strong>` })}</p>
<button type="button" id="bank-start" class="wide" data-pay disabled>${m.bankStart}</button>
<p id="bank-status" class="status" role="status" aria-live="polite"></p>
</section>`;
}
