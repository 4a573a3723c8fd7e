import { html, type SafeHtml } from './html.ts';
import type { PageContext } from './layout.ts';

/** The simulated wallet's button (test mode only); disabled until the script has loaded. */
export function renderWalletPanel(ctx: PageContext): SafeHtml {
  const m = ctx.messages;
  return html`<section class="panel" aria-labelledby="wallet-title">
<h2 id="wallet-title">${m.wallet}</h2>
<p class="muted">${m.walletNote}</p>
<button type="button" id="wallet-pay" class="wide" data-pay disabled>${m.walletPay}</button>
<p id="wallet-status" class="status" role="status" aria-live="polite"></p>
</section>`;
}
