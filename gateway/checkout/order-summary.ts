import type { Order } from '../../src/gen/checkout/v1/order_pb.ts';
import { formatMoney } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import type { PageContext } from './layout.ts';

/** The order's reference, line items and total, as a section of the payment page. */
export function renderOrderSummary(order: Order | undefined, ctx: PageContext): SafeHtml {
  const m = ctx.messages;
  const currency = order?.currency ?? '';
  const money = (minor: bigint) => formatMoney(minor, currency, ctx.locale.locale);
  const items = order?.lineItems ?? [];
  return html`<section class="panel" aria-labelledby="summary-title">
<h2 id="summary-title">${m.summary}</h2>
<dl class="facts"><dt>${m.reference}</dt><dd>${order?.reference}</dd></dl>
<table>
${items.length > 0 && html`<thead><tr><th scope="col">${m.item}</th><th scope="col" class="num">${m.amount}</th></tr></thead>
<tbody>${items.map((item) => html`<tr><td>${item.name}</td><td class="num">${money(item.amount)}</td></tr>`)}</tbody>`}
<tfoot><tr><th scope="row">${m.total}</th><td class="num">${money(order?.amount ?? 0n)}</td></tr></tfoot>
</table>
</section>`;
}
