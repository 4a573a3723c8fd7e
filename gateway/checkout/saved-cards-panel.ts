import type { SavedCard } from '../../src/gen/checkout/v1/customer_pb.ts';
import { html, type SafeHtml } from './html.ts';
import { fill } from './i18n.ts';
import type { PageContext } from './layout.ts';

const BRAND_LABELS: Readonly<Record<string, string>> = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', discover: 'Discover' };

/**
 * The order's customer's saved cards, one button each (one-click payment): brand, last four and
 * expiry only. Disabled until the script has loaded; a card that asks for 3-D Secure opens the
 * challenge dialog as a typed card does.
 */
export function renderSavedCardsPanel(cards: readonly SavedCard[], ctx: PageContext, total: string): SafeHtml {
  const m = ctx.messages;
  return html`<section class="panel" aria-labelledby="saved-title">
<h2 id="saved-title">${m.savedCards}</h2>
<ul class="saved-cards">${cards.map(
    (card) =>
      html`<li><button type="button" class="wide secondary" data-pay data-saved-card="${card.id}">${fill(m.payWithSavedCard, {
        amount: total,
        brand: BRAND_LABELS[card.brand] ?? card.brand,
        last4: card.last4,
        expiry: `${String(card.expMonth).padStart(2, '0')}/${String(card.expYear % 100).padStart(2, '0')}`,
      })}</button></li>`,
  )}</ul>
<p id="saved-status" class="status" role="status" aria-live="polite"></p>
</section>`;
}
