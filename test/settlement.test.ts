// Settlement on the real Postgres: captured money waits in the pending balance for the merchant's
// delay, then one set-based run moves each order's net to the available balance, once; refunds after
// settlement come out of the available balance, and a settled order can no longer be voided.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { PostgresSettlement } from '../src/modules/payout/adapters/postgres/postgres-settlement.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

function client(shop: SandboxCredentials) {
  const headers = { authorization: `Bearer ${shop.test_secret_key}` };
  const json = { ...headers, 'content-type': 'application/json' };
  return {
    order: async (overrides: Record<string, unknown> = {}) => {
      const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: json, payload: orderBody({ amount: 2500, line_items: [], ...overrides }) });
      const id = res.json().id as string;
      expect((await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers })).statusCode).toBe(200);
      return id;
    },
    balance: async () => (await svc.app.inject({ method: 'GET', url: '/v1/balance', headers })).json(),
    run: async () => svc.app.inject({ method: 'POST', url: '/v1/test_helpers/payouts/run', headers }),
    refund: (id: string, amount: number) => svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/refunds`, headers: json, payload: JSON.stringify({ amount, reason: 'other' }) }),
    void: (id: string) => svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/void`, headers }),
  };
}

describe('settlement', () => {
  it('moves each paid order\'s net from pending to available, once, and only for the merchant asked', async () => {
    const shop = await svc.sandbox('Settling shop');
    const other = await svc.sandbox('Other settling shop');
    const api = client(shop);
    const otherApi = client(other);
    const a = await api.order({ reference: 'settle-a' });
    const b = await api.order({ reference: 'settle-b', amount: 10_000 });
    await otherApi.order({ reference: 'other' });
    // 2500 nets 2440; 10000 nets 10000 - 140 - 25 = 9835.
    expect(await api.balance()).toEqual({ object: 'balance', pending: [{ currency: 'EUR', amount: 12_275 }], available: [], livemode: false });

    const run = await api.run();
    expect(run.statusCode, run.body).toBe(200);
    // The test helper settles, then pays the available balance out at once (test/payouts.test.ts).
    expect(run.json()).toMatchObject({ object: 'payout_run', settled_orders: 2, payouts: [{ amount: 12_275, status: 'paid' }] });
    expect(await api.balance()).toMatchObject({ pending: [{ currency: 'EUR', amount: 0 }], available: [{ currency: 'EUR', amount: 0 }] });
    expect((await api.run()).json()).toEqual({ object: 'payout_run', settled_orders: 0, payouts: [] });
    // The other merchant's money has not moved.
    expect(await otherApi.balance()).toMatchObject({ pending: [{ currency: 'EUR', amount: 2440 }], available: [] });

    for (const id of [a, b]) {
      expect((await svc.db.knex('orders').where({ id }).first()).settled_at).not.toBeNull();
      expect(await svc.db.knex('ledger_transactions').where({ id: `ltx_settle_${id}` })).toHaveLength(1);
    }
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('takes a refund after settlement from the available balance, and refuses to void a settled order', async () => {
    const shop = await svc.sandbox('Refund after settlement');
    const api = client(shop);
    const id = await api.order({ reference: 'settled-then-refunded' });
    await api.run();
    const refunded = await api.refund(id, 1000);
    expect(refunded.json()).toMatchObject({ status: 'succeeded', amount: 1000 });
    // Paid out already: the refund takes the available balance below zero, for the next payout to make up.
    expect(await api.balance()).toMatchObject({ pending: [{ currency: 'EUR', amount: 0 }], available: [{ currency: 'EUR', amount: -1000 }] });
    const voided = await api.void(id);
    expect(voided.statusCode).toBe(409);
    expect(voided.json().error).toMatchObject({ code: 'order_already_settled', message: expect.stringMatching(/Refund it instead/) });
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('carries what an order refunded in full owes (its fees) into the available balance, and skips voided orders', async () => {
    const shop = await svc.sandbox('Nothing to settle');
    const api = client(shop);
    const refundedId = await api.order({ reference: 'refunded-first' });
    expect((await api.refund(refundedId, 2500)).json().status).toBe('succeeded');
    const voidedId = await api.order({ reference: 'voided-first' });
    expect((await api.void(voidedId)).json().status).toBe('voided');
    expect(await api.balance()).toMatchObject({ pending: [{ currency: 'EUR', amount: -60 }] });
    expect((await api.run()).json().settled_orders).toBe(1);
    expect(await svc.db.knex('ledger_transactions').where({ id: `ltx_settle_${refundedId}` })).toHaveLength(1);
    expect((await svc.db.knex('orders').where({ id: voidedId }).first()).settled_at).toBeNull();
    // The kept fees are owed by the merchant: a negative available balance, carried to the next payout.
    expect(await api.balance()).toMatchObject({ pending: [{ currency: 'EUR', amount: 0 }], available: [{ currency: 'EUR', amount: -60 }] });
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('waits for each merchant\'s delay, and settles each order once when runs race', async () => {
    const shop = await svc.sandbox('Delayed shop');
    const api = client(shop);
    const ids = await Promise.all([1, 2, 3, 4, 5].map((i) => api.order({ reference: `delayed-${i}` })));
    const settlement = new PostgresSettlement(svc.db.knex);
    const scope = { merchantId: shop.merchant_id, livemode: false };
    // Captured just now: a run that honours the 2-day delay settles nothing; one 3 days later settles all, once.
    expect(await settlement.settleDue({ now: new Date(), scope, ignoreDelay: false, limit: 100 })).toBe(0);
    const later = new Date(Date.now() + 3 * 86_400_000);
    const raced = await Promise.all([1, 2, 3].map(() => settlement.settleDue({ now: later, scope, ignoreDelay: false, limit: 2 })));
    let total = raced.reduce((sum, n) => sum + n, 0);
    while (total < ids.length) {
      const n = await settlement.settleDue({ now: later, scope, ignoreDelay: false, limit: 2 });
      expect(n).toBeGreaterThan(0);
      total += n;
    }
    expect(total).toBe(5);
    expect(await settlement.settleDue({ now: later, scope, ignoreDelay: false, limit: 100 })).toBe(0);
    expect(await svc.db.knex('ledger_transactions').where({ merchant_id: shop.merchant_id, kind: 'settle' })).toHaveLength(5);
    expect(await api.balance()).toMatchObject({ available: [{ currency: 'EUR', amount: 5 * 2440 }] });
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('settles every refund that commits while a run takes the orders: nothing is left on the pending balance of a settled order', async () => {
    // A refund holding an order's lock commits while the run waits for it: the run must still see the
    // refund's entries when it sums the order's net (found by a fresh-clone review: one snapshot was not enough).
    const shop = await svc.sandbox('Racing refunds and settlement');
    const api = client(shop);
    const settlement = new PostgresSettlement(svc.db.knex);
    const scope = { merchantId: shop.merchant_id, livemode: false };
    for (let round = 0; round < 4; round++) {
      const ids = await Promise.all(Array.from({ length: 25 }, (_, i) => api.order({ reference: `race-${round}-${i}`, amount: 1000 })));
      const refunds = ids.map((id) => api.refund(id, 100));
      const runs = [1, 2, 3, 4].map(() => settlement.settleDue({ now: new Date(), scope, ignoreDelay: true, limit: 5 }));
      const answers = await Promise.all(refunds);
      await Promise.all(runs);
      while ((await settlement.settleDue({ now: new Date(), scope, ignoreDelay: true, limit: 100 })) > 0);
      for (const answer of answers) expect(answer.json().status).toBe('succeeded');
      const broken = await svc.core.ledger.verify();
      expect(broken, JSON.stringify(broken)).toBeUndefined();
    }
    expect(await api.balance()).toMatchObject({ pending: [{ currency: 'EUR', amount: 0 }], available: [{ currency: 'EUR', amount: 100 * (1000 - 14 - 25 - 100) }] });
  });

  it('is test mode only', async () => {
    const shop = await svc.sandbox('Live run');
    const res = await svc.app.inject({ method: 'POST', url: '/v1/test_helpers/payouts/run', headers: { authorization: `Bearer ${shop.live_secret_key}` } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('test_mode_only');
  });
});
