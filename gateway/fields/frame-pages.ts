import { html } from '../checkout/html.ts';

/** The frame pages, by path segment under /fields/. */
export const FRAME_PAGES = {
  'card-number': { field: 'cardNumber', title: 'Card number', autocomplete: 'cc-number', maxlength: 23, placeholder: '1234 1234 1234 1234' },
  'card-expiry': { field: 'cardExpiry', title: 'Expiry date (MM / YY)', autocomplete: 'cc-exp', maxlength: 9, placeholder: 'MM / YY' },
  'card-cvc': { field: 'cardCvc', title: 'Security code (CVC)', autocomplete: 'cc-csc', maxlength: 4, placeholder: 'CVC' },
  returned: { field: 'returned', title: 'Back from your bank', autocomplete: 'off', maxlength: 0, placeholder: '' },
} as const;

export type FramePage = keyof typeof FRAME_PAGES;

/** Where a frame page links its script and stylesheet. */
export interface FrameAssetUrls {
  readonly script: string;
  readonly style: string;
}

/**
 * A field frame's document: one labelled input, its error text in a live region, the frame's stylesheet and
 * deferred script (no inline code, for the CSP). The returned page (where a 3-D Secure redirect of the fields
 * ends, in the page's overlay) holds one line of text; its script tells the page to read the result.
 * The same for every merchant: the merchant's label, placeholder and style arrive by postMessage.
 */
export function renderFramePage(page: FramePage, assets: FrameAssetUrls): string {
  const p = FRAME_PAGES[page];
  const body =
    page === 'returned'
      ? html`<main class="returned">
<p role="status">Checking your payment…</p>
</main>`
      : html`<label id="l" for="f" class="sr">${p.title}</label>
<input id="f" class="input" type="text" inputmode="numeric" autocomplete="${p.autocomplete}" autocorrect="off" spellcheck="false" maxlength="${String(p.maxlength)}" placeholder="${p.placeholder}" aria-describedby="e">
<p id="e" class="sr" aria-live="assertive"></p>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${p.title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.style}">
<script src="${assets.script}" defer></script>
</head>
<body data-field="${p.field}">
${body}
</body>
</html>
`.value;
}
