import type { Checkout } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { html, type SafeHtml } from './html.ts';
import type { Messages, PageLocale } from './i18n.ts';

/** Where the pages link their script and stylesheet. */
export interface AssetUrls {
  readonly script: string;
  readonly style: string;
}

/** What every page render needs besides the checkout: the customer's language, the asset links and the time. */
export interface PageContext {
  readonly locale: PageLocale;
  readonly messages: Messages;
  readonly assets: AssetUrls;
  readonly now: Date;
}

/** The merchant's display name, or the catalogue's word for "merchant" when the core sent none. */
export function merchantName(checkout: Checkout, ctx: PageContext): string {
  return checkout.merchantName || ctx.messages.merchant;
}

/** A page's parts, put into the shared document by {@link renderDocument}. */
export interface PageParts {
  readonly title: string;
  /** The whole <main> element. */
  readonly main: SafeHtml;
  readonly testMode?: boolean;
}

/**
 * The HTML document around every checkout page: language, viewport, the one
 * stylesheet and the one deferred script (no inline code, for the CSP), and
 * the test-mode banner.
 */
export function renderDocument(ctx: PageContext, parts: PageParts): string {
  return html`<!doctype html>
<html lang="${ctx.locale.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${parts.title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ctx.assets.style}">
<script src="${ctx.assets.script}" defer></script>
</head>
<body>
${parts.testMode && html`<header class="test-mode"><p>${ctx.messages.testMode}</p></header>`}
${parts.main}
</body>
</html>
`.value;
}
