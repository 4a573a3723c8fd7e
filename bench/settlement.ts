// bench/settlement: settles 100,000 captured orders across 100 merchants with the set-based
// settlement run, pays the result out (one payout per merchant, an item per order), and times
// `ledger verify` on the result. Prints figures; asserts nothing.
//
//   npm run bench:settlement
//   BENCH_ORDERS=100000 BENCH_MERCHANTS=100 npm run bench:settlement
//
// The captures are generated in SQL (orders, payments and their capture transactions, exactly as
// the capture posting writes them: gross, percentage fee, fixed fee), so the setup is not timed.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createDatabase, migrateLatest } from '../src/kernel/adapters/postgres/database.ts';
import { PostgresSettlement } from '../src/modules/payout/adapters/postgres/postgres-settlement.ts';
import { PostgresLedgerAudit } from '../src/modules/ledger/adapters/postgres/postgres-ledger.ts';
import { createSettleDue } from '../src/modules/payout/application/settle-due.ts';
import { PostgresPayoutBatcher } from '../src/modules/payout/adapters/postgres/postgres-payouts.ts';
import { SANDBOX_PAYOUT_IBAN } from '../src/modules/payout/domain/payout.entity.ts';
import { cryptoIdGenerator } from '../src/kernel/adapters/node/crypto-id-generator.ts';
import { envInt, KEEP_DB, log, POSTGRES_URL } from './support.ts';

const ORDERS = envInt('BENCH_ORDERS', 100_000);
const MERCHANTS = envInt('BENCH_MERCHANTS', 100);

const name = `checkout_bench_settle_${randomBytes(4).toString('hex')}`;
const admin = createDatabase({ url: `${POSTGRES_URL}/postgres`, poolMax: 1 });
await admin.raw('CREATE DATABASE ??', [name]);
const knex = createDatabase({ url: `${POSTGRES_URL}/${name}`, poolMax: 4 });
try {
  await migrateLatest(knex);
  log(`generating ${ORDERS} captured orders across ${MERCHANTS} merchants in ${name}`);
  const started = performance.now();
  await knex.raw(`INSERT INTO merchants (id, name, checkout_host, settlement_currency, created_at)
                  SELECT 'mer_bench' || m, 'Bench ' || m, 'http://127.0.0.1', 'EUR', now() FROM generate_series(1, ?) m`, [MERCHANTS]);
  // 2500 EUR cents each: 35 percentage fee, 25 fixed fee, 2440 net (docs/money.md's worked example).
  await knex.transaction(async (trx) => {
    await trx.raw(
      `INSERT INTO orders (id, merchant_id, livemode, reference, amount, currency, status, line_items, checkout_url, method,
                           settlement_currency, settlement_amount, version, created_at, updated_at, expires_at, checkout_token)
       SELECT 'ord_bench' || i, 'mer_bench' || (1 + i % ?), false, 'ref-' || i, 2500, 'EUR', 'paid', '[]', 'http://127.0.0.1/c/' || i, 'card',
              'EUR', 2440, 2, now() - interval '3 days', now() - interval '3 days', now() + interval '1 day', 'tok' || i
       FROM generate_series(1, ?) i`,
      [MERCHANTS, ORDERS],
    );
    await trx.raw(
      `INSERT INTO payments (id, order_id, merchant_id, livemode, method, amount, currency, status, capture_ref, captured_amount, captured_at, created_at, updated_at)
       SELECT 'pay_bench' || i, 'ord_bench' || i, 'mer_bench' || (1 + i % ?), false, 'card', 2500, 'EUR', 'succeeded', 'cap' || i, 2500,
              now() - interval '3 days', now() - interval '3 days', now() - interval '3 days'
       FROM generate_series(1, ?) i`,
      [MERCHANTS, ORDERS],
    );
    await trx.raw(
      `INSERT INTO ledger_transactions (id, kind, merchant_id, livemode, order_id, payment_id, reference, created_at)
       SELECT 'ltx_capture_pay_bench' || i, 'capture', 'mer_bench' || (1 + i % ?), false, 'ord_bench' || i, 'pay_bench' || i, 'ref-' || i, now() - interval '3 days'
       FROM generate_series(1, ?) i`,
      [MERCHANTS, ORDERS],
    );
    await trx.raw(
      `INSERT INTO ledger_entries (transaction_id, merchant_id, livemode, account, currency, amount, purpose, order_id, reference, created_at)
       SELECT 'ltx_capture_pay_bench' || i, 'mer_bench' || (1 + i % ?), false, e.account, 'EUR', e.amount, e.purpose, 'ord_bench' || i, 'ref-' || i, now() - interval '3 days'
       FROM generate_series(1, ?) i
       CROSS JOIN (VALUES ('acquirer_clearing', 2500, 'gross'), ('merchant_pending', -2500, 'gross'),
                          ('merchant_pending', 35, 'percentage_fee'), ('fees_earned', -35, 'percentage_fee'),
                          ('merchant_pending', 25, 'fixed_fee'), ('fees_earned', -25, 'fixed_fee')) AS e (account, amount, purpose)`,
      [MERCHANTS, ORDERS],
    );
  });
  await knex.raw('ANALYZE');
  log(`setup took ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const settleDue = createSettleDue({ settlement: new PostgresSettlement(knex), clock: { now: () => new Date() } });
  const t0 = performance.now();
  const settled = await settleDue();
  const settleSeconds = (performance.now() - t0) / 1000;

  const batcher = new PostgresPayoutBatcher(knex);
  const now = new Date();
  const tp = performance.now();
  const payouts = (await batcher.makePayouts({ now, cutoff: now, arrivalDate: now.toISOString().slice(0, 10), sandboxIban: SANDBOX_PAYOUT_IBAN, newId: () => cryptoIdGenerator.newId('po_') })) ?? [];
  const payoutSeconds = (performance.now() - tp) / 1000;
  const [items] = (await knex('payout_items').count({ n: '*' })) as { n: string }[];

  const audit = new PostgresLedgerAudit(knex);
  const t1 = performance.now();
  const broken = await audit.verify();
  const verifySeconds = (performance.now() - t1) / 1000;

  const [available] = (await knex('ledger_balances').where({ account: 'merchant_available' }).sum({ total: 'balance' })) as { total: string }[];
  console.log(`settled orders     ${settled} of ${ORDERS} (${MERCHANTS} merchants)`);
  console.log(`settlement run     ${settleSeconds.toFixed(2)} s  (${Math.round(settled / settleSeconds)} orders/s; aim: under 10 s for 100,000)`);
  console.log(`payout run         ${payoutSeconds.toFixed(2)} s  (${payouts.length} payouts, ${items?.n} items)`);
  console.log(`ledger verify      ${verifySeconds.toFixed(2)} s  (${broken ? `BROKEN: ${broken.invariant}: ${broken.detail}` : 'every invariant holds'})`);
  const [inTransit] = (await knex('ledger_balances').where({ account: 'payouts_in_transit' }).sum({ total: 'balance' })) as { total: string }[];
  console.log(`available balance  ${-Number(available?.total ?? 0)} EUR cents (expected 0: all paid out)`);
  console.log(`payouts in transit ${-Number(inTransit?.total ?? 0)} EUR cents (expected ${ORDERS * 2440})`);
  console.log(JSON.stringify({ orders: ORDERS, merchants: MERCHANTS, settled, settle_seconds: Number(settleSeconds.toFixed(3)), payout_seconds: Number(payoutSeconds.toFixed(3)), payouts: payouts.length, verify_seconds: Number(verifySeconds.toFixed(3)), verified: !broken }));
} finally {
  await knex.destroy();
  if (KEEP_DB) log(`kept ${POSTGRES_URL}/${name}`);
  else await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
  await admin.destroy();
}
