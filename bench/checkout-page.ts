// Weight and render time of the hosted checkout page.
//
//   node bench/checkout-page.ts
//   BENCH_RENDERS=20000 node bench/checkout-page.ts
//
// First-load weight: the HTML of a full payment page (card, wallet, bank
// transfer, three line items, German) plus its stylesheet and script, raw,
// gzip (level 9) and brotli (quality 11). Render time: the page function
// alone (GetCheckout answer in, HTML string out), timed per call after a
// warm-up. Exits 1 when a budget is missed: 50 KB compressed first load,
// 10 ms p99 render.
import { performance } from 'node:perf_hooks';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ReceiptSchema } from '../src/gen/checkout/v1/checkout_pb.ts';
import { OrderStatus } from '../src/gen/checkout/v1/order_pb.ts';
import { loadCheckoutAssets } from '../gateway/checkout/assets.ts';
import { messagesFor, negotiateLocale } from '../gateway/checkout/i18n.ts';
import type { PageContext } from '../gateway/checkout/layout.ts';
import { renderCheckout } from '../gateway/checkout/render-checkout.ts';
import { SAMPLE_NOW, sampleCheckout } from '../gateway/checkout/sample-checkout.ts';

const RENDERS = Number(process.env.BENCH_RENDERS ?? 5000);
const WARMUP = 500;
const BUDGET_BYTES = 50 * 1024;
const BUDGET_P99_MS = 10;

const assets = loadCheckoutAssets();
const context = (acceptLanguage: string): PageContext => {
  const locale = negotiateLocale(acceptLanguage);
  return { locale, messages: messagesFor(locale.language), assets: { script: assets.script.url, style: assets.style.url }, now: SAMPLE_NOW };
};

// ---------------------------------------------------------------- weight

const gzip = (b: Buffer) => gzipSync(b, { level: 9 }).length;
const brotli = (b: Buffer) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const kb = (n: number) => `${(n / 1024).toFixed(1).padStart(6)} KB`;

const page = Buffer.from(renderCheckout(sampleCheckout(), context('de-DE,de;q=0.9')));
const files: [string, Buffer][] = [
  ['HTML (payment page, de)', page],
  [`CSS  ${assets.style.name}`, assets.style.body],
  [`JS   ${assets.script.name}`, assets.script.body],
];
const totals = { raw: 0, gzip: 0, brotli: 0 };
console.log('First load                                      raw        gzip      brotli');
for (const [name, body] of files) {
  const sizes = { raw: body.length, gzip: gzip(body), brotli: brotli(body) };
  totals.raw += sizes.raw;
  totals.gzip += sizes.gzip;
  totals.brotli += sizes.brotli;
  console.log(`  ${name.padEnd(40)} ${kb(sizes.raw)}  ${kb(sizes.gzip)}  ${kb(sizes.brotli)}`);
}
console.log(`  ${'total (3 requests, no fonts, no images)'.padEnd(40)} ${kb(totals.raw)}  ${kb(totals.gzip)}  ${kb(totals.brotli)}`);

// ---------------------------------------------------------------- render time

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function timeRenders(label: string, render: () => string): number {
  for (let i = 0; i < WARMUP; i++) render();
  const samples = new Float64Array(RENDERS);
  let sink = 0;
  for (let i = 0; i < RENDERS; i++) {
    const start = performance.now();
    sink += render().length;
    samples[i] = performance.now() - start;
  }
  samples.sort();
  const p99 = percentile(samples, 99);
  const ms = (v: number) => `${(v * 1000).toFixed(0).padStart(5)} µs`;
  console.log(`  ${label.padEnd(40)} p50 ${ms(percentile(samples, 50))}   p99 ${ms(p99)}   max ${ms(samples[samples.length - 1]!)}   (${sink > 0 ? RENDERS : 0} renders)`);
  return p99;
}

const paid = sampleCheckout({
  order: { status: OrderStatus.PAID },
  receipt: create(ReceiptSchema, { method: 'card', cardBrand: 'visa', cardLast4: '4242', paidAt: timestampFromDate(SAMPLE_NOW) }),
});
const pending = sampleCheckout();
console.log(`\nRender time of the page function (${RENDERS} renders after ${WARMUP} warm-up)`);
const p99s = [
  // A fresh context per render, as per request: locale negotiation included.
  timeRenders('payment page, en', () => renderCheckout(pending, context('en-US,en;q=0.9'))),
  timeRenders('payment page, de', () => renderCheckout(pending, context('de-DE,de;q=0.9'))),
  timeRenders('receipt, de', () => renderCheckout(paid, context('de'))),
];

const compressed = Math.max(totals.gzip, totals.brotli);
const ok = compressed <= BUDGET_BYTES && Math.max(...p99s) < BUDGET_P99_MS;
console.log(`\nBudget: first load ≤ ${BUDGET_BYTES / 1024} KB compressed (${kb(compressed).trim()} gzip), p99 render < ${BUDGET_P99_MS} ms: ${ok ? 'met' : 'MISSED'}`);
process.exitCode = ok ? 0 : 1;
