// bench/subscriptions: charges 10,000 due subscription cycles through the biller (each cycle its
// order, made once, charged off-session on a vaulted card through the payment engine, with its
// ledger capture and events), and prints cycles per second and the end-to-end time, then verifies
// the ledger. Prints figures; asserts nothing.
//
//   npm run bench:subscriptions
//   BENCH_CYCLES=10000 BENCH_CONCURRENCY=8 npm run bench:subscriptions
//
// The subscriptions are made in SQL (untimed), all due now, on one customer's vaulted card; the
// timed part is the biller: BENCH_CONCURRENCY runners taking due subscriptions (SKIP LOCKED), as
// several biller workers would. Compare the rate with bench/orders' orders per second.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createDatabase, migrateLatest } from '../src/kernel/adapters/postgres/database.ts';
import { createCore } from '../src/composition/core.ts';
import { envInt, KEEP_DB, log, POSTGRES_URL } from './support.ts';

const CYCLES = envInt('BENCH_CYCLES', 10_000);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 8);

const name = `checkout_bench_subs_${randomBytes(4).toString('hex')}`;
const admin = createDatabase({ url: `${POSTGRES_URL}/postgres`, poolMax: 1 });
await admin.raw('CREATE DATABASE ??', [name]);
const knex = createDatabase({ url: `${POSTGRES_URL}/${name}`, poolMax: CONCURRENCY * 2 + 2 });
const errors: unknown[] = [];
try {
  await migrateLatest(knex);
  const core = createCore({ knex, apiBaseUrl: 'http://127.0.0.1:9', checkoutHost: 'http://127.0.0.1:9', onInternalError: (err) => errors.push(err) });
  const shop = (await core.createSandbox({ name: 'Bench subscriptions', settlementCurrency: 'EUR' }))!;
  const card = shop.test_cards.find((c) => c.behaviour === 'approved')!;
  // A customer with a vaulted card, through the API as a merchant would.
  const { buildGateway } = await import('../gateway/app.ts');
  const app = await buildGateway({ routes: core.routes, publicUrl: 'http://127.0.0.1:9' });
  const headers = { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' };
  const customer = (await app.inject({ method: 'POST', url: '/v1/customers', headers, payload: JSON.stringify({ email: 'bench@example.com' }) })).json();
  const saved = (await app.inject({ method: 'POST', url: `/v1/customers/${customer.id}/cards`, headers, payload: JSON.stringify({ card: { number: card.number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '123', name: 'Bench' } }) })).json();
  await app.close();

  log(`making ${CYCLES} subscriptions due now in ${name}`);
  await knex.raw(
    `INSERT INTO subscriptions (id, merchant_id, livemode, customer_id, card_id, amount, currency, reference, line_items, interval, interval_count,
                                start_date, trial_days, cycles, after_failed_retries, status, next_cycle, next_charge_at, retries, first_failure_at,
                                cancel_at_period_end, canceled_at, cancellation_reason, test_clock_id, version, created_at, updated_at)
     SELECT 'sub_bench' || i, ?, false, ?, ?, 990, 'EUR', 'bench-' || i, '[]', 'month', 1, now(), 0, null, 'unpaid', 'active', 1, now(), 0, null,
            false, null, null, null, 1, now(), now()
     FROM generate_series(1, ?) i`,
    [shop.merchant_id, customer.id, saved.id, CYCLES],
  );
  await knex.raw('ANALYZE');

  const started = performance.now();
  let charged = 0;
  const runner = async () => {
    for (;;) {
      const n = await core.billing.runDue(50);
      charged += n;
      if (n === 0) {
        // Done when nothing is due any more (a declined cycle waits for its retry a day later).
        const due = await knex('subscriptions').where('next_charge_at', '<=', new Date()).whereIn('status', ['active', 'past_due']).count<{ count: string }[]>({ count: '*' });
        if (Number(due[0]?.count ?? 0) === 0) return;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, runner));
  const seconds = (performance.now() - started) / 1000;

  const paid = (await knex('orders').whereNotNull('subscription_id').andWhere('status', 'paid').count<{ n: string }[]>({ n: '*' }))[0]?.n;
  const cycles = (await knex('subscription_cycles').count<{ n: string }[]>({ n: '*' }))[0]?.n;
  const tv = performance.now();
  const broken = await core.ledger.verify();
  const verifySeconds = (performance.now() - tv) / 1000;
  console.log(`cycles charged     ${charged} of ${CYCLES} (${CONCURRENCY} runners)`);
  console.log(`end to end         ${seconds.toFixed(2)} s  (${Math.round(charged / seconds)} cycles/s; aim: at least half of bench/orders' orders/s)`);
  console.log(`orders paid        ${paid}, cycle rows ${cycles} (each cycle once)`);
  console.log(`ledger verify      ${verifySeconds.toFixed(2)} s  (${broken ? `BROKEN: ${broken.invariant}: ${broken.detail}` : 'every invariant holds'})`);
  console.log(`background errors  ${errors.length}`);
  console.log(JSON.stringify({ cycles: CYCLES, concurrency: CONCURRENCY, charged, seconds: Number(seconds.toFixed(3)), cycles_per_second: Math.round(charged / seconds), verified: !broken, errors: errors.length }));
} finally {
  await knex.destroy();
  if (KEEP_DB) log(`kept ${POSTGRES_URL}/${name}`);
  else await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
  await admin.destroy();
}
