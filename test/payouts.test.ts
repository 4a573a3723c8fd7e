// Payouts on the real Postgres: a run turns each merchant's available money into one payout per mode
// and currency, itemised by order, refund and adjustment with the merchant's reference; it is safe to
// repeat, to run concurrently and to crash; a negative balance is carried forward; a failed payout
// returns its money; the daily schedule makes one run per day.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { PostgresPayoutBatcher } from '../src/modules/payout/adapters/postgres/postgres-payouts.ts';
import { SANDBOX_PAYOUT_IBAN } from '../src/modules/payout/domain/payout.entity.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';
import { payWithTestCard } from './support/payments.ts';

let svc: TestService;
let offsetMs = 0;

beforeAll(async () => {
  // A clock the daily-schedule test moves; the others leave it at the real time.
  svc = await startTestService({ clock: { now: () => new Date(Date.now() + offsetMs) }, payoutCutoffMinutesUtc: 0 });
});
afterAll(async () => {
  await svc?.close();
});

function client(shop: SandboxCredentials, key = shop.test_secret_key) {
  const headers = { authorization: `Bearer ${key}` };
  const json = { ...headers, 'content-type': 'application/json' };
  const get = async (url: string) => svc.app.inject({ method: 'GET', url, headers });
  return {
    /** A paid order: by the approved test card, or by a simulated transfer. */
    paid: async (amount: number, reference: string, by: 'card' | 'transfer' = 'card') => {
      const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: json, payload: orderBody({ amount, reference, line_items: [] }) });
      const id = res.json().id as string;
      if (by === 'card') await payWithTestCard(svc.core.routes, shop, id);
      else expect((await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers })).statusCode).toBe(200);
      return id;
    },
    run: async (body: Record<string, unknown> = {}) => {
      const res = await svc.app.inject({ method: 'POST', url: '/v1/test_helpers/payouts/run', headers: json, payload: JSON.stringify(body) });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    },
    refund: (id: string, amount: number) => svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/refunds`, headers: json, payload: JSON.stringify({ amount, reason: 'other' }) }),
    balance: async () => (await get('/v1/balance')).json(),
    get,
  };
}

async function events(type: string, subject: string) {
  return svc.db.knex('events').where({ type, subject_id: subject }).orderBy('sequence');
}

describe('payouts', () => {
  it('pays out the available balance as one batch itemised by order, with totals, events, paging and the CSV export', async () => {
    const shop = await svc.sandbox('Paid out shop');
    const api = client(shop);
    const a = await api.paid(2500, 'po-order-a');
    const b = await api.paid(10_000, 'po-order-b,"quoted"');
    const c = await api.paid(4000, '=HYPERLINK("x")', 'transfer');

    const run = await api.run();
    expect(run.settled_orders).toBe(3);
    expect(run.payouts).toHaveLength(1);
    const payout = run.payouts[0];
    // Fees 1.4% (half up) + 0.25: 2500 → 35 + 25; 10000 → 140 + 25; 4000 → 56 + 25.
    expect(payout).toMatchObject({
      object: 'payout',
      status: 'paid',
      currency: 'EUR',
      amount: 16_500 - 306,
      totals: { gross: 16_500, fees: 306, refunds: 0, disputes: 0, adjustments: 0, net: 16_194 },
      item_count: 3,
      order_count: 3,
      destination: `DE89 •••• ${SANDBOX_PAYOUT_IBAN.slice(-4)}`,
      arrival_date: new Date().toISOString().slice(0, 10),
      livemode: false,
    });
    expect(await api.balance()).toMatchObject({ pending: [{ currency: 'EUR', amount: 0 }], available: [{ currency: 'EUR', amount: 0 }] });

    const got = await api.get(`/v1/payouts/${payout.id}`);
    expect(got.statusCode, got.body).toBe(200);
    const body = got.json();
    expect(body).toMatchObject({ id: payout.id, status: 'paid', items: { object: 'list', has_more: false, url: `/v1/payouts/${payout.id}/items` } });
    expect(body.items.data.map((i: { order: string }) => i.order).sort()).toEqual([a, b, c].sort());
    // Items are numbered within their payout: nothing of other merchants' volume shows.
    expect(body.items.data.map((i: { id: string }) => i.id)).toEqual(['1', '2', '3']);
    expect(body.items.data.find((i: { order: string }) => i.order === b)).toMatchObject({
      object: 'payout_item',
      type: 'charge',
      reference: 'po-order-b,"quoted"',
      currency: 'EUR',
      gross: 10_000,
      fees: { percentage: 140, fixed: 25, other: 0, total: 165 },
      net: 9835,
    });

    // Items page with a cursor.
    const first = (await api.get(`/v1/payouts/${payout.id}/items?limit=2`)).json();
    expect(first).toMatchObject({ object: 'list', has_more: true });
    expect(first.data).toHaveLength(2);
    const second = (await api.get(`/v1/payouts/${payout.id}/items?limit=2&starting_after=${first.data[1].id}`)).json();
    expect(second).toMatchObject({ has_more: false });
    expect([...first.data, ...second.data].map((i: { id: string }) => i.id)).toEqual(body.items.data.map((i: { id: string }) => i.id));
    expect((await api.get(`/v1/payouts/${payout.id}/items?starting_after=999999999`)).json().error.code).toBe('starting_after_invalid');

    // The reconciliation export: a header, then one line per item, each with its reference, escaped.
    const csv = await api.get(`/v1/payouts/${payout.id}/items.csv`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('payout,item,type,order,refund,dispute,reference,currency,gross,percentage_fee,fixed_fee,other_fees,net,created');
    expect(lines).toHaveLength(4);
    expect(lines.find((l) => l.includes(b))).toContain(`,charge,${b},,,"po-order-b,""quoted""",EUR,10000,140,25,0,9835,`);
    // A reference a spreadsheet would run as a formula is defused.
    expect(lines.find((l) => l.includes(c))).toContain(`,"'=HYPERLINK(""x"")",EUR,4000,56,25,0,3919,`);

    // payout.settled names the orders behind the batch with their references; payout.paid follows.
    const [settled] = await events('payout.settled', payout.id);
    expect(settled.data).toMatchObject({ id: payout.id, amount: 16_194, status: 'in_transit', orders_truncated: false });
    expect(settled.data.orders).toEqual(expect.arrayContaining([{ id: a, reference: 'po-order-a' }, { id: b, reference: 'po-order-b,"quoted"' }]));
    expect(await events('payout.paid', payout.id)).toHaveLength(1);

    // The list, newest first, and by status.
    expect((await api.get('/v1/payouts')).json()).toMatchObject({ object: 'list', data: [{ id: payout.id }], has_more: false });
    expect((await api.get('/v1/payouts?status=failed')).json().data).toEqual([]);
    expect((await api.get('/v1/payouts?status=lost')).json().error.code).toBe('parameter_invalid');

    // A second run finds nothing left to pay out.
    expect(await api.run()).toMatchObject({ settled_orders: 0, payouts: [] });
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('takes refunds after settlement off the next payout, carries a negative balance forward, and pays it back in later', async () => {
    const shop = await svc.sandbox('Refunding shop');
    const api = client(shop);
    const a = await api.paid(5000, 'neg-a');
    const first = await api.run();
    expect(first.payouts[0].amount).toBe(5000 - 70 - 25);

    // Refunded after it was paid out: the available balance goes negative and no payout is made.
    expect((await api.refund(a, 3000)).json().status).toBe('succeeded');
    const none = await api.run();
    expect(none.payouts).toEqual([]);
    expect(await api.balance()).toMatchObject({ available: [{ currency: 'EUR', amount: -3000 }] });

    // A new sale more than covers it: the payout nets both, itemised.
    const b = await api.paid(10_000, 'neg-b');
    const next = await api.run();
    expect(next.payouts).toHaveLength(1);
    expect(next.payouts[0]).toMatchObject({ amount: 9835 - 3000, totals: { gross: 10_000, fees: 165, refunds: -3000, net: 6835 }, item_count: 2, order_count: 2 });
    const items = (await api.get(`/v1/payouts/${next.payouts[0].id}/items`)).json().data;
    expect(items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'refund', order: a, reference: 'neg-a', gross: -3000, net: -3000, fees: { percentage: 0, fixed: 0, other: 0, total: 0 } }),
        expect.objectContaining({ type: 'charge', order: b, reference: 'neg-b', net: 9835 }),
      ]),
    );
    expect(await api.balance()).toMatchObject({ available: [{ currency: 'EUR', amount: 0 }] });
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('a refund before settlement nets into the order; a failed payout returns its money, which the next payout carries as an adjustment', async () => {
    const shop = await svc.sandbox('Failing bank shop');
    const api = client(shop);
    const a = await api.paid(8000, 'fail-a');
    expect((await api.refund(a, 1000)).json().status).toBe('succeeded');

    const failed = await api.run({ outcome: 'failed' });
    expect(failed.payouts[0]).toMatchObject({ status: 'failed', failure_code: 'account_closed', amount: 8000 - 112 - 25 - 1000, totals: { gross: 8000, fees: 137, refunds: -1000 } });
    const failedId = failed.payouts[0].id;
    expect(await events('payout.failed', failedId)).toHaveLength(1);
    expect(await api.balance()).toMatchObject({ available: [{ currency: 'EUR', amount: 6863 }] });

    const retried = await api.run();
    expect(retried.payouts[0]).toMatchObject({ status: 'paid', amount: 6863, totals: { gross: 0, fees: 0, adjustments: 6863 }, item_count: 1, order_count: 0 });
    const [item] = (await api.get(`/v1/payouts/${retried.payouts[0].id}/items`)).json().data;
    expect(item).toMatchObject({ type: 'payout_failure', order: null, net: 6863 });
    // The order stays in the payout that failed, once: its money came back as the failure, not as the order.
    expect(await svc.db.knex('payout_items').where({ order_id: a, type: 'charge' })).toHaveLength(1);
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('is safe to run concurrently and to crash: every transaction is paid out once, and a failed run leaves nothing', async () => {
    const shop = await svc.sandbox('Racing payouts');
    const api = client(shop);
    for (let i = 0; i < 6; i++) await api.paid(1000 + i, `race-${i}`, 'transfer');
    const scope = { merchantId: shop.merchant_id, livemode: false };
    expect((await svc.core.payoutRuns.runNow(scope, 'paid')).payouts).toHaveLength(1);

    // New money, then a crash in the middle of the next run.
    for (let i = 0; i < 5; i++) await api.paid(3000 + i, `again-${i}`, 'transfer');
    await svc.db.knex.raw(`CREATE FUNCTION payout_crash() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'killed mid-run'; END $$`);
    await svc.db.knex.raw(`CREATE TRIGGER payout_crash BEFORE INSERT ON payout_items FOR EACH STATEMENT EXECUTE FUNCTION payout_crash()`);
    const before = await svc.db.knex('payouts').where({ merchant_id: scope.merchantId }).count<{ count: string }[]>('* as count');
    const crashed = await svc.app.inject({ method: 'POST', url: '/v1/test_helpers/payouts/run', headers: { authorization: `Bearer ${shop.test_secret_key}` } });
    expect(crashed.statusCode).toBe(500);
    await svc.db.knex.raw('DROP TRIGGER payout_crash ON payout_items');
    await svc.db.knex.raw('DROP FUNCTION payout_crash()');
    // Nothing half-made: no payout, no item, no ledger transaction; the money waits on the available balance.
    expect(await svc.db.knex('payouts').where({ merchant_id: scope.merchantId }).count<{ count: string }[]>('* as count')).toEqual(before);
    expect(await api.balance()).toMatchObject({ available: [{ currency: 'EUR', amount: 5 * 3000 + 10 - 5 * (42 + 25) }] });

    // Five runs at once after the restart: one payout holds every transaction, once.
    const batcher = new PostgresPayoutBatcher(svc.db.knex);
    let n = 0;
    const now = new Date(Date.now() + offsetMs);
    const runs = await Promise.all(
      [1, 2, 3, 4, 5].map(() => batcher.makePayouts({ now, cutoff: now, arrivalDate: now.toISOString().slice(0, 10), scope, sandboxIban: SANDBOX_PAYOUT_IBAN, newId: () => `po_race${n++}` })),
    );
    expect(runs.flat()).toHaveLength(1);
    const made = await svc.db.knex('payouts').where({ id: runs.flat()[0] }).first();
    expect(Number(made.amount)).toBe(5 * 3000 + 10 - 5 * (42 + 25));
    expect(Number(made.item_count)).toBe(5);
    expect(svc.internalErrors.length).toBeGreaterThan(0); // the crash was reported as an internal error
    svc.internalErrors.length = 0;
    await svc.core.payoutRuns.runNow(scope, 'paid');
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('keeps payouts to their merchant and mode, and refuses the test helper with a live key', async () => {
    const shop = await svc.sandbox('Private payouts');
    const other = await svc.sandbox('Nosy shop');
    const api = client(shop);
    await api.paid(1500, 'private');
    const [payout] = (await api.run()).payouts;
    expect((await client(other).get(`/v1/payouts/${payout.id}`)).statusCode).toBe(404);
    expect((await client(other).get(`/v1/payouts/${payout.id}/items.csv`)).statusCode).toBe(404);
    expect((await client(other).get('/v1/payouts')).json().data).toEqual([]);
    const live = await svc.core.issueApiKeys({ merchantId: shop.merchant_id, livemode: true });
    const liveApi = client(shop, live!.secret_key);
    expect((await liveApi.get(`/v1/payouts/${payout.id}`)).statusCode).toBe(404);
    const refused = await svc.app.inject({ method: 'POST', url: '/v1/test_helpers/payouts/run', headers: { authorization: `Bearer ${live!.secret_key}` } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('test_mode_only');
    expect((await api.get('/v1/payouts/po_doesnotexist')).statusCode).toBe(404);
    const badOutcome = await svc.app.inject({ method: 'POST', url: '/v1/test_helpers/payouts/run', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' }, payload: '{"outcome":"lost"}' });
    expect(badOutcome.statusCode).toBe(400);
    expect(badOutcome.json().error).toMatchObject({ code: 'parameter_invalid', param: 'outcome', message: 'outcome must be "paid" or "failed".' });
  });

  it('runs once a day after the cut-off, whichever worker gets there, and lands each payout on its arrival date', async () => {
    const shop = await svc.sandbox('Scheduled shop');
    const api = client(shop);
    await api.paid(6000, 'scheduled-a', 'transfer');
    const payouts = async () => (await api.get('/v1/payouts')).json().data;
    const midnight = () => {
      const now = new Date(Date.now() + offsetMs);
      return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    };
    // Three days on, past the settlement delay: the money settles now, after today's cut-off, so it
    // waits for tomorrow's run. Two workers tick at once.
    offsetMs = 3 * 86_400_000;
    await Promise.all([svc.core.payoutRuns.scheduled(), svc.core.payoutRuns.scheduled()]);
    expect(await payouts()).toEqual([]);
    expect(await api.balance()).toMatchObject({ available: [{ currency: 'EUR', amount: 6000 - 84 - 25 }] });

    // The next day's run takes it, once, whichever of the two workers claims the day.
    offsetMs = 4 * 86_400_000;
    const made = await Promise.all([svc.core.payoutRuns.scheduled(), svc.core.payoutRuns.scheduled()]);
    expect(made.filter((n) => n > 0)).toHaveLength(1);
    expect(await svc.core.payoutRuns.scheduled()).toBe(0);
    const [payout] = await payouts();
    expect(payout).toMatchObject({ amount: 6000 - 84 - 25, status: 'in_transit' });
    expect(payout.cutoff).toBe(new Date(midnight()).toISOString());
    expect(payout.arrival_date).toBe(new Date(midnight() + 86_400_000).toISOString().slice(0, 10));
    expect(await events('payout.settled', payout.id)).toHaveLength(1);

    // A day later the money arrives.
    offsetMs = 5 * 86_400_000;
    await svc.core.payoutRuns.scheduled();
    expect((await api.get(`/v1/payouts/${payout.id}`)).json().status).toBe('paid');
    expect(await events('payout.paid', payout.id)).toHaveLength(1);
    offsetMs = 0;
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });
});
