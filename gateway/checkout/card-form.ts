import { html, raw, type SafeHtml } from './html.ts';
import type { PageContext } from './layout.ts';

const DIGITS = raw('type="text" inputmode="numeric" autocapitalize="off" spellcheck="false"');

/** One labelled input with its error element, tied by aria-describedby. */
function field(id: string, label: string, attributes: SafeHtml): SafeHtml {
  return html`<div class="field"><label for="${id}">${label}</label><input id="${id}" ${attributes} required aria-describedby="${id}-error"><p id="${id}-error" class="error"></p></div>`;
}

/**
 * The card form. Inputs carry no name attribute, so even a native submission
 * (before the script runs) could not put card data into a request; the pay
 * button stays disabled until the script has loaded. When the order names a
 * customer, a checkbox offers to save the card once the payment succeeds.
 */
export function renderCardForm(ctx: PageContext, payLabel: string, canSave = false): SafeHtml {
  const m = ctx.messages;
  return html`<section class="panel" aria-labelledby="card-title">
<h2 id="card-title">${m.payByCard}</h2>
<form id="card-form" method="post" novalidate>
<div class="field"><div class="label-row"><label for="cc-number">${m.cardNumber}</label><span id="cc-brand" class="brand"></span></div><input id="cc-number" ${DIGITS} autocomplete="cc-number" maxlength="23" required aria-describedby="cc-brand cc-number-error"><p id="cc-number-error" class="error"></p></div>
<div class="row">
${field('cc-exp', m.expiry, html`${DIGITS} autocomplete="cc-exp" maxlength="7" placeholder="${m.expiryPlaceholder}"`)}
${field('cc-csc', m.cvc, html`${DIGITS} autocomplete="cc-csc" maxlength="4"`)}
</div>
${field('cc-name', m.nameOnCard, raw('type="text" autocomplete="cc-name" autocapitalize="words" spellcheck="false" maxlength="100"'))}
${canSave && html`<div class="field check"><input id="cc-save" type="checkbox"><label for="cc-save">${m.saveCard}</label></div>`}
<button type="submit" id="card-submit" class="wide" data-pay disabled>${payLabel}</button>
<p id="card-status" class="status" role="status" aria-live="polite"></p>
</form>
</section>`;
}
