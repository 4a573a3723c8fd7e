import { html, type SafeHtml } from './html.ts';
import type { PageContext } from './layout.ts';
import { fill } from './i18n.ts';

/**
 * The simulated card issuer's 3-D Secure step: a modal dialog the script
 * opens when a payment requires authentication, labelled by its heading,
 * with the issuer's hint (test mode), a code input, Confirm and Cancel.
 */
export function renderChallengeDialog(ctx: PageContext, amount: string, merchant: string): SafeHtml {
  const m = ctx.messages;
  return html`<dialog id="challenge" aria-labelledby="challenge-title" aria-describedby="challenge-intro">
<form id="challenge-form" method="post" novalidate>
<p class="issuer">${m.challengeIssuer}</p>
<h2 id="challenge-title">${m.challengeTitle}</h2>
<p id="challenge-intro">${fill(m.challengeIntro, { amount, merchant })}</p>
<p id="challenge-hint" class="hint"></p>
<div class="field"><label for="challenge-code">${m.challengeCode}</label><input id="challenge-code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required aria-describedby="challenge-hint challenge-code-error"><p id="challenge-code-error" class="error"></p></div>
<p id="challenge-status" class="status" role="status" aria-live="polite"></p>
<div class="actions"><button type="submit" id="challenge-submit">${m.challengeSubmit}</button><button type="button" id="challenge-cancel" class="secondary">${m.challengeCancel}</button></div>
</form>
</dialog>`;
}
