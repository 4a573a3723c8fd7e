// The ledger's foundations on the real Postgres: the database keeps it append-only and balanced,
// every capture posts its gross, fees and net once, and `checkout ledger verify` names a broken invariant.
import type { Knex } from 'knex';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { payWithTestCard } from './support/payments.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { capturePosting } from '../src/modules/ledger/domain/postings.ts';
import { settlementBreakdown } from '../src/modules/payment/domain/settlement.ts';
import { PostgresUnitOfWork } from '../src/kernel/adapters/postgres/postgres-unit-of-work.ts';
import { postgresScope } from '../src/composition/modules.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

const CLI = fileURLToPath(new URL('../bin/checkout.ts', import.meta.url));

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Ledger shop');
});
afterAll(async () => {
  await svc?.close();
});

async function newOrder(overrides: Record<string, unknown> = {}): Promise<{ id: string; reference: string }> {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/v1/orders',
    headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' },
    payload: orderBody(overrides),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function payByCard(orderId: string): Promise<void> {
  const { outcome } = await payWithTestCard(svc.core.routes, shop, orderId);
  expect(outcome?.status).toBe(PaymentStatus.SUCCEEDED);
}

/** The entries of the order's transactions, as [account, currency, amount, purpose]. */
async function entriesOf(orderId: string): Promise<[string, string, number, string][]> {
  const rows = await svc.db.knex('ledger_entries').where({ order_id: orderId }).orderBy('id');
  return rows.map((r) => [r.account, r.currency, Number(r.amount), r.purpose]);
}

async function balances(): Promise<Record<string, number>> {
  const rows = await svc.core.ledger.balances(shop.merchant_id, false);
  return Object.fromEntries(rows.map((r) => [`${r.account} ${r.currency}`, Number(r.balance)]));
}

describe('the database keeps the ledger', () => {
  it('refuses to change or delete a posted entry or transaction', async () => {
    const { id } = await newOrder({ reference: 'immutable' });
    await payByCard(id);
    const entry = await svc.db.knex('ledger_entries').where({ order_id: id }).first();
    await expect(svc.db.knex('ledger_entries').where({ id: entry.id }).update({ amount: 1 })).rejects.toThrow(/append-only/);
    await expect(svc.db.knex('ledger_entries').where({ id: entry.id }).delete()).rejects.toThrow(/append-only/);
    await expect(svc.db.knex('ledger_transactions').where({ id: entry.transaction_id }).update({ reference: 'x' })).rejects.toThrow(/append-only/);
    await expect(svc.db.knex('ledger_transactions').where({ id: entry.transaction_id }).delete()).rejects.toThrow(/append-only/);
    await expect(svc.db.knex.raw('TRUNCATE ledger_entries CASCADE')).rejects.toThrow(/append-only/);
    expect(await svc.db.knex('ledger_entries').where({ id: entry.id }).first()).toEqual(entry);
  });

  it.each([
    ['one entry', [['merchant_pending', -100]]],
    ['debits and credits that differ', [['acquirer_clearing', 100], ['merchant_pending', -99]]],
  ] as const)('cannot commit a transaction with %s', async (_label, entries) => {
    const txId = `ltx_test_${entries.length}_${Math.abs(entries[entries.length - 1]![1])}`;
    const attempt = svc.db.knex.transaction(async (trx) => {
      await trx('ledger_transactions').insert({ id: txId, kind: 'capture', merchant_id: shop.merchant_id, livemode: false, created_at: new Date() });
      await trx('ledger_entries').insert(
        entries.map(([account, amount]) => ({ transaction_id: txId, merchant_id: shop.merchant_id, livemode: false, account, currency: 'EUR', amount, purpose: 'gross', created_at: new Date() })),
      );
    });
    await expect(attempt).rejects.toThrow(/at least two|does not balance/);
    expect(await svc.db.knex('ledger_transactions').where({ id: txId })).toHaveLength(0);
    expect(await svc.db.knex('ledger_entries').where({ transaction_id: txId })).toHaveLength(0);
  });

  it("keeps an account's balance in shards, so two open transactions of one merchant post to the same accounts without waiting on each other", async () => {
    const post = async (trx: Knex.Transaction, txId: string) => {
      await trx('ledger_transactions').insert({ id: txId, kind: 'capture', merchant_id: shop.merchant_id, livemode: false, created_at: new Date() });
      await trx('ledger_entries').insert(
        [['acquirer_clearing', 100], ['merchant_pending', -100]].map(([account, amount]) => ({
          transaction_id: txId, merchant_id: shop.merchant_id, livemode: false, account, currency: 'EUR', amount, purpose: 'gross', created_at: new Date(),
        })),
      );
    };
    const txidOf = async (trx: Knex.Transaction) => Number((await trx.raw('SELECT txid_current() AS id')).rows[0].id);
    const before = await balances();
    const first = await svc.db.knex.transaction();
    let second = await svc.db.knex.transaction();
    try {
      const firstShard = (await txidOf(first)) % 16;
      await post(first, 'ltx_test_shard_a');
      // The second transaction's id must pick another shard; ids are handed out in turn, so the next one does.
      while ((await txidOf(second)) % 16 === firstShard) {
        await second.rollback();
        second = await svc.db.knex.transaction();
      }
      // With one balance row per account this insert waits for `first` to end: the lock timeout makes that a failure.
      await second.raw("SET LOCAL lock_timeout = '10s'");
      await post(second, 'ltx_test_shard_b');
      await second.commit();
      await first.commit();
    } finally {
      if (!second.isCompleted()) await second.rollback();
      if (!first.isCompleted()) await first.rollback();
    }
    const after = await balances();
    expect((after['acquirer_clearing EUR'] ?? 0) - (before['acquirer_clearing EUR'] ?? 0)).toBe(200);
    expect((after['merchant_pending EUR'] ?? 0) - (before['merchant_pending EUR'] ?? 0)).toBe(-200);
    const shards = await svc.db.knex('ledger_balances').where({ merchant_id: shop.merchant_id, livemode: false, account: 'acquirer_clearing', currency: 'EUR' });
    expect(shards.length).toBeGreaterThanOrEqual(2);
  });

  it('plans the balance check at each call (a redefinition that drops plan_cache_mode would bring back whole-table scans)', async () => {
    const { rows } = await svc.db.knex.raw<{ rows: { config: string[] | null }[] }>("SELECT proconfig AS config FROM pg_proc WHERE proname = 'ledger_check_balanced'");
    expect(rows).toHaveLength(1);
    expect(rows[0]!.config).toContain('plan_cache_mode=force_custom_plan');
  });

  it('refuses balanced entries added later to a transaction already posted: a posted transaction is sealed', async () => {
    const { id } = await newOrder({ reference: 'sealed' });
    await payByCard(id);
    const capture = await svc.db.knex('ledger_transactions').where({ order_id: id, kind: 'capture' }).first();
    const before = await entriesOf(id);
    // Two entries that balance among themselves, moving 1000 from the platform's fees to the merchant.
    const attempt = svc.db.knex('ledger_entries').insert(
      [['fees_earned', 1000], ['merchant_pending', -1000]].map(([account, amount]) => ({
        transaction_id: capture.id, merchant_id: shop.merchant_id, livemode: false, account, currency: 'EUR', amount, purpose: 'gross', order_id: id, created_at: new Date(),
      })),
    );
    await expect(attempt).rejects.toThrow(/is sealed/);
    expect(await entriesOf(id)).toEqual(before);
  });
});

describe('a capture posts its gross, fees and net, once', () => {
  it('a card payment in the settlement currency: the acquirer owes the gross, the merchant is owed the net, the fees are ours', async () => {
    const before = await balances();
    const { id, reference } = await newOrder({ reference: 'card-eur', amount: 2500, line_items: [] });
    await payByCard(id);
    // 1.4 % of 25.00 EUR is 0.35, plus 0.25: the merchant is owed 24.40 (docs/money.md's worked example).
    expect(await entriesOf(id)).toEqual([
      ['acquirer_clearing', 'EUR', 2500, 'gross'],
      ['merchant_pending', 'EUR', -2500, 'gross'],
      ['merchant_pending', 'EUR', 35, 'percentage_fee'],
      ['fees_earned', 'EUR', -35, 'percentage_fee'],
      ['merchant_pending', 'EUR', 25, 'fixed_fee'],
      ['fees_earned', 'EUR', -25, 'fixed_fee'],
    ]);
    const tx = await svc.db.knex('ledger_transactions').where({ order_id: id }).first();
    expect(tx).toMatchObject({ kind: 'capture', reference, livemode: false });
    expect(tx.id).toBe(`ltx_capture_${tx.payment_id}`);
    const after = await balances();
    const delta = (key: string) => (after[key] ?? 0) - (before[key] ?? 0);
    expect([delta('acquirer_clearing EUR'), delta('merchant_pending EUR'), delta('fees_earned EUR')]).toEqual([2500, -2440, -60]);
    const order = (await svc.app.inject({ method: 'GET', url: `/v1/orders/${id}`, headers: { authorization: `Bearer ${shop.test_secret_key}` } })).json();
    expect(order.settlement).toEqual({ currency: 'EUR', amount: 2440 });
  });

  it('a transfer in another currency passes through currency_conversion, balanced in each currency', async () => {
    const { id } = await newOrder({ reference: 'transfer-usd', amount: 10_000, currency: 'USD', line_items: [] });
    const res = await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers: { authorization: `Bearer ${shop.test_secret_key}` } });
    expect(res.statusCode, res.body).toBe(200);
    const expected = settlementBreakdown({ amount: 10_000n, currency: 'USD' }, 'EUR');
    expect(expected.gross).toEqual({ currency: 'EUR', amount: 9200n });
    expect(await entriesOf(id)).toEqual([
      ['acquirer_clearing', 'USD', 10_000, 'conversion'],
      ['currency_conversion', 'USD', -10_000, 'conversion'],
      ['currency_conversion', 'EUR', 9200, 'gross'],
      ['merchant_pending', 'EUR', -9200, 'gross'],
      ['merchant_pending', 'EUR', 129, 'percentage_fee'],
      ['fees_earned', 'EUR', -129, 'percentage_fee'],
      ['merchant_pending', 'EUR', 25, 'fixed_fee'],
      ['fees_earned', 'EUR', -25, 'fixed_fee'],
    ]);
    expect(res.json().settlement).toEqual({ currency: 'EUR', amount: 9200 - 129 - 25 });
  });

  it('posting the same capture again posts nothing (its id is derived from the payment)', async () => {
    const { id } = await newOrder({ reference: 'twice' });
    await payByCard(id);
    const payment = await svc.db.knex('payments').where({ order_id: id, status: 'succeeded' }).first();
    const order = await svc.db.knex('orders').where({ id }).first();
    const posting = capturePosting({
      paymentId: payment.id,
      orderId: id,
      merchantId: shop.merchant_id,
      livemode: false,
      reference: order.reference,
      captured: { amount: BigInt(order.amount), currency: order.currency },
      settlement: settlementBreakdown({ amount: BigInt(order.amount), currency: order.currency }, 'EUR'),
      at: new Date(),
    });
    const before = await entriesOf(id);
    const uow = new PostgresUnitOfWork(svc.db.knex, postgresScope);
    const posted = await Promise.all([1, 2, 3].map(() => uow.run((tx) => tx.ledger.post(posting))));
    expect(posted).toEqual([false, false, false]);
    expect(await entriesOf(id)).toEqual(before);
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });
});

describe('checkout ledger verify', () => {
  function verifyCli(): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, 'ledger', 'verify'], {
        env: { PATH: process.env.PATH, DATABASE_URL: svc.db.url, NATS_URL: 'nats://127.0.0.1:4222' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it('exits 0 when every invariant holds, and 1 naming the first broken one', async () => {
    const { id } = await newOrder({ reference: 'verify' });
    await payByCard(id);
    const ok = await verifyCli();
    expect(ok, ok.stderr).toMatchObject({ code: 0, stdout: 'ledger: every invariant holds\n' });

    // Balances are derived data the database lets us touch: skew one and verify must name it.
    // (A balance is held in shards: one shard's row is skewed and put back.)
    const row = await svc.db.knex('ledger_balances').where({ merchant_id: shop.merchant_id, account: 'fees_earned', currency: 'EUR' }).first();
    const shard = { merchant_id: shop.merchant_id, livemode: row.livemode, account: 'fees_earned', currency: 'EUR', shard: row.shard };
    await svc.db.knex('ledger_balances').where(shard).update({ balance: BigInt(row.balance) + 1n });
    const broken = await verifyCli();
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/ledger invariant broken: every account balance equals the sum of its entries: .*fees_earned EUR/);
    await svc.db.knex('ledger_balances').where(shard).update({ balance: row.balance });

    // A captured payment without its capture transaction.
    const payment = await svc.db.knex('payments').where({ order_id: id }).first();
    await svc.db.knex('payments').insert({ ...payment, id: 'pay_phantomcapture', submission_id: null, order_id: (await newOrder({ reference: 'phantom' })).id });
    const missing = await verifyCli();
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/every captured payment has exactly its capture transaction: pay_phantomcapture/);
    await svc.db.knex('payments').where({ id: 'pay_phantomcapture' }).delete();
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });
});
