// Refunds on the real Postgres: full and partial, the rules that refuse one, Idempotency-Key, a
// transfer in another currency, and 50 concurrent refunds that cannot refund more than was captured.
// Every test ends with the ledger verified (test/support/service.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { payWithTestCard } from './support/payments.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';
import { PostgresUnitOfWork } from '../src/kernel/adapters/postgres/postgres-unit-of-work.ts';
import { postgresScope } from '../src/composition/modules.ts';
import { SimulatedProcessor } from '../src/modules/payment/adapters/simulator/simulated-processor.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Refund shop');
});
afterAll(async () => {
  await svc?.close();
});

const headers = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', ...extra });

async function paidOrder(overrides: Record<string, unknown> = {}): Promise<string> {
  const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody({ amount: 2500, line_items: [], ...overrides }) });
  expect(created.statusCode, created.body).toBe(201);
  const orderId = created.json().id as string;
  const { outcome } = await payWithTestCard(svc.core.routes, shop, orderId);
  expect(outcome?.status).toBe(PaymentStatus.SUCCEEDED);
  return orderId;
}

function refund(orderId: string, body: Record<string, unknown>, extra: Record<string, string> = {}) {
  return svc.app.inject({ method: 'POST', url: `/v1/orders/${orderId}/refunds`, headers: headers(extra), payload: JSON.stringify(body) });
}

const getOrder = async (id: string) => (await svc.app.inject({ method: 'GET', url: `/v1/orders/${id}`, headers: headers() })).json();

describe('refunds', () => {
  it('refunds an order in full: the refund, the order, order.refunded and the ledger', async () => {
    const id = await paidOrder({ reference: 'full-refund' });
    const res = await refund(id, { reason: 'requested_by_customer', note: 'Returned unopened' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ object: 'refund', order: id, reference: 'full-refund', amount: 2500, currency: 'EUR', reason: 'requested_by_customer', note: 'Returned unopened', status: 'succeeded', failure_code: null });
    expect(body.id).toMatch(/^re_/);
    const order = await getOrder(id);
    expect(order).toMatchObject({ status: 'refunded', amount_refunded: 2500, refunds: [body] });
    const event = await svc.db.knex('events').where({ order_id: id, type: 'order.refunded' }).first();
    expect(event.data).toEqual({
      id,
      reference: 'full-refund',
      amount: 2500,
      currency: 'EUR',
      amount_refunded: 2500,
      refund: { id: body.id, amount: 2500, currency: 'EUR', reason: 'requested_by_customer', note: 'Returned unopened' },
    });
    const entries = await svc.db.knex('ledger_entries').where({ transaction_id: `ltx_refund_${body.id}` }).orderBy('id');
    expect(entries.map((e) => [e.account, e.currency, Number(e.amount)])).toEqual([
      ['merchant_pending', 'EUR', 2500],
      ['acquirer_clearing', 'EUR', -2500],
    ]);
    // The fees are not returned: the merchant is owed the net less the refund.
    const balances = (await svc.db.knex('ledger_entries').where({ order_id: id }).groupBy('account').select('account').sum({ total: 'amount' })) as { account: string; total: string }[];
    expect(Object.fromEntries(balances.map((b) => [b.account, Number(b.total)]))).toEqual({ acquirer_clearing: 0, merchant_pending: 60, fees_earned: -60 });
  });

  it('takes partial refunds in a row, then the rest, then refuses more', async () => {
    const id = await paidOrder({ reference: 'partials' });
    expect((await refund(id, { amount: 1000, reason: 'other' })).json()).toMatchObject({ amount: 1000, status: 'succeeded' });
    expect(await getOrder(id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 1000 });
    expect((await refund(id, { amount: 500, reason: 'duplicate' })).json()).toMatchObject({ amount: 500, status: 'succeeded' });
    const rest = await refund(id, { reason: 'other' });
    expect(rest.json()).toMatchObject({ amount: 1000, status: 'succeeded' });
    expect(await getOrder(id)).toMatchObject({ status: 'refunded', amount_refunded: 2500 });
    expect((await getOrder(id)).refunds.map((r: { amount: number }) => r.amount)).toEqual([1000, 500, 1000]);
    const more = await refund(id, { amount: 1, reason: 'other' });
    expect(more.statusCode).toBe(400);
    expect(more.json().error).toMatchObject({ code: 'refund_exceeds_remaining', param: 'amount' });
  });

  it.each<[string, Record<string, unknown>, number, string, string | undefined]>([
    ['more than remains', { amount: 2501, reason: 'other' }, 400, 'refund_exceeds_remaining', 'amount'],
    ['a zero amount', { amount: 0, reason: 'other' }, 400, 'amount_invalid', 'amount'],
    ['an unknown reason', { reason: 'changed_mind' }, 400, 'reason_invalid', 'reason'],
    ['no reason', {}, 400, 'parameter_missing', 'reason'],
    ['a note over 500 characters', { reason: 'other', note: 'x'.repeat(501) }, 400, 'note_invalid', 'note'],
    ['an unknown field', { reason: 'other', currency: 'EUR' }, 400, 'parameter_unknown', 'currency'],
  ])('refuses %s and writes nothing', async (_label, body, status, code, param) => {
    const id = await paidOrder({ reference: `refused-${code}` });
    const before = await svc.db.knex('refunds').count<{ count: string }[]>('* as count');
    const res = await refund(id, body);
    expect(res.statusCode).toBe(status);
    expect(res.json().error).toMatchObject({ code, ...(param ? { param } : {}) });
    expect(await svc.db.knex('refunds').count<{ count: string }[]>('* as count')).toEqual(before);
    expect(await getOrder(id)).toMatchObject({ status: 'paid', amount_refunded: 0 });
  });

  it('refuses "amount": null rather than reading it as the whole remainder (a client that writes unset values as null must not refund everything)', async () => {
    const id = await paidOrder({ reference: 'null-amount' });
    const res = await refund(id, { amount: null, reason: 'other' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ param: 'amount' });
    expect(await svc.db.knex('refunds').where({ order_id: id })).toHaveLength(0);
  });

  it('refuses an order that was never paid (409), and another merchant\'s order (404)', async () => {
    const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody() });
    const unpaid = await refund(created.json().id, { reason: 'other' });
    expect(unpaid.statusCode).toBe(409);
    expect(unpaid.json().error).toMatchObject({ code: 'order_not_refundable' });
    const id = await paidOrder({ reference: 'not-yours' });
    const other = await svc.sandbox('Other refund shop');
    const res = await svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/refunds`, headers: { authorization: `Bearer ${other.test_secret_key}`, 'content-type': 'application/json' }, payload: JSON.stringify({ reason: 'other' }) });
    expect(res.statusCode).toBe(404);
    expect(await getOrder(id)).toMatchObject({ status: 'paid', amount_refunded: 0 });
  });

  it('answers a repeated Idempotency-Key with the first refund, and refuses the key for another request', async () => {
    const id = await paidOrder({ reference: 'idempotent-refund' });
    const first = await refund(id, { amount: 700, reason: 'other' }, { 'idempotency-key': 'refund-once' });
    const again = await refund(id, { amount: 700, reason: 'other' }, { 'idempotency-key': 'refund-once' });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const other = await refund(id, { amount: 800, reason: 'other' }, { 'idempotency-key': 'refund-once' });
    expect(other.statusCode).toBe(422);
    expect(other.json().error.code).toBe('idempotency_key_reused');
    expect(await getOrder(id)).toMatchObject({ amount_refunded: 700 });
  });

  it('refunds a transfer in another currency back through currency_conversion', async () => {
    const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody({ reference: 'usd-refund', amount: 10_000, currency: 'USD', line_items: [] }) });
    const id = created.json().id as string;
    expect((await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers: { authorization: `Bearer ${shop.test_secret_key}` } })).statusCode).toBe(200);
    const res = await refund(id, { amount: 2500, reason: 'product_not_received' });
    expect(res.json()).toMatchObject({ amount: 2500, currency: 'USD', status: 'succeeded' });
    const entries = await svc.db.knex('ledger_entries').where({ transaction_id: `ltx_refund_${res.json().id}` }).orderBy('id');
    // 25.00 USD at the reference rates is 23.00 EUR.
    expect(entries.map((e) => [e.account, e.currency, Number(e.amount)])).toEqual([
      ['merchant_pending', 'EUR', 2300],
      ['currency_conversion', 'EUR', -2300],
      ['currency_conversion', 'USD', 2500],
      ['acquirer_clearing', 'USD', -2500],
    ]);
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('never over-refunds: 50 concurrent refunds of 30% each make exactly three', async () => {
    const id = await paidOrder({ reference: 'race', amount: 10_000 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => refund(id, { amount: 3000, reason: 'duplicate' })));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    // The others were refused for what remains, or lost a race and were told to retry; none failed.
    for (const a of answers.filter((x) => x.statusCode !== 201)) {
      expect(['refund_exceeds_remaining', 'concurrent_change']).toContain(a.json().error.code);
    }
    expect(await getOrder(id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 9000 });
    const rows = await svc.db.knex('refunds').where({ order_id: id });
    expect(rows.map((r) => [r.status, Number(r.amount)])).toEqual([['succeeded', 3000], ['succeeded', 3000], ['succeeded', 3000]]);
    expect((await svc.db.knex('orders').where({ id }).first()).amount_refund_pending).toBe('0');
    expect(await svc.core.ledger.verify()).toBeUndefined();
    expect(svc.internalErrors).toEqual([]);
  });

  it('leaves the database refusing what the code would not: no refund reservation past the amount', async () => {
    const id = await paidOrder({ reference: 'constraint' });
    await expect(svc.db.knex('orders').where({ id }).update({ amount_refund_pending: 2501 })).rejects.toThrow(/orders_refunds_within_amount/);
  });
});

describe('voids', () => {
  const voidOrder = (id: string, extra: Record<string, string> = {}, body?: string) =>
    svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/void`, headers: { authorization: `Bearer ${shop.test_secret_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra }, payload: body });

  it('voids a paid card order before settlement: the capture is reversed, no fee, the ledger as if nothing was captured', async () => {
    const id = await paidOrder({ reference: 'void-card' });
    const res = await voidOrder(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'voided', amount_refunded: 0 });
    expect(res.json().attempts.map((a: { status: string }) => a.status)).toEqual(['reversed']);
    const event = await svc.db.knex('events').where({ order_id: id, type: 'order.voided' }).first();
    expect(event.data).toEqual({ id, reference: 'void-card', amount: 2500, currency: 'EUR' });
    const net = (await svc.db.knex('ledger_entries').where({ order_id: id }).groupBy('account').select('account').sum({ total: 'amount' })) as { account: string; total: string }[];
    expect(net.map((n) => [n.account, Number(n.total)]).sort()).toEqual([['acquirer_clearing', 0], ['fees_earned', 0], ['merchant_pending', 0]]);
    // A voided order answers unchanged, and cannot be refunded.
    const again = await voidOrder(id);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(res.json());
    const refused = await refund(id, { reason: 'other' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('order_not_refundable');
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('voids an order paid by transfer at once, and takes Idempotency-Key', async () => {
    const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody({ reference: 'void-transfer' }) });
    const id = created.json().id as string;
    await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers: { authorization: `Bearer ${shop.test_secret_key}` } });
    const first = await voidOrder(id, { 'idempotency-key': 'void-once' });
    const replay = await voidOrder(id, { 'idempotency-key': 'void-once' });
    expect(first.json()).toMatchObject({ status: 'voided' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id, kind: 'void' })).toHaveLength(1);
  });

  it('refuses an unpaid order and an order with refunds (refund instead), and a body with parameters', async () => {
    const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody() });
    const unpaid = await voidOrder(created.json().id);
    expect(unpaid.statusCode).toBe(409);
    expect(unpaid.json().error.code).toBe('order_not_voidable');
    const id = await paidOrder({ reference: 'void-after-refund' });
    await refund(id, { amount: 100, reason: 'other' });
    const refunded = await voidOrder(id);
    expect(refunded.statusCode).toBe(409);
    expect(refunded.json().error).toMatchObject({ code: 'order_not_voidable', message: expect.stringMatching(/refund the rest instead/) });
    const withBody = await voidOrder(id, {}, '{"amount": 5}');
    expect(withBody.statusCode).toBe(400);
    expect(withBody.json().error.code).toBe('parameter_unknown');
  });

  it('a void racing refunds: either the void wins and no refund succeeds, or refunds win and the void is refused', async () => {
    const id = await paidOrder({ reference: 'void-race', amount: 10_000 });
    const answers = await Promise.all([voidOrder(id), ...Array.from({ length: 5 }, () => refund(id, { amount: 1000, reason: 'other' }))]);
    const [voided, ...refunds] = answers;
    const succeeded = refunds.filter((r) => r.statusCode === 201 && r.json().status === 'succeeded').length;
    const order = await getOrder(id);
    if (voided!.statusCode === 200) {
      expect(order).toMatchObject({ status: 'voided', amount_refunded: 0 });
      expect(succeeded).toBe(0);
    } else {
      expect(voided!.json().error.code).toBe('order_not_voidable');
      expect(order.amount_refunded).toBe(succeeded * 1000);
    }
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });
});

describe('a refund a stopped process left pending', () => {
  it('is settled by the sweeper once it has been pending for a minute, and only once', async () => {
    const id = await paidOrder({ reference: 'stale-refund' });
    const order = await svc.db.knex('orders').where({ id }).first();
    const payment = await svc.db.knex('payments').where({ order_id: id, status: 'succeeded' }).first();
    // What a process leaves when it stops after reserving and before the acquirer's answer is recorded.
    const uow = new PostgresUnitOfWork(svc.db.knex, postgresScope);
    const longAgo = new Date(Date.now() - 5 * 60_000);
    await uow.run((tx) =>
      tx.refunds.reserve({
        id: 're_stalerefund1', orderId: id, paymentId: payment.id, merchantId: order.merchant_id, livemode: false, reference: 'stale-refund',
        amount: 400n, currency: 'EUR', reason: 'other', note: '', status: 'pending', processorRef: null, failureCode: null, createdAt: longAgo,
      }),
    );
    expect(await getOrder(id)).toMatchObject({ status: 'paid', amount_refunded: 0 });
    // Another refund sees the reservation: only 2100 remain.
    const tooMuch = await refund(id, { amount: 2101, reason: 'other' });
    expect(tooMuch.json().error.code).toBe('refund_exceeds_remaining');
    expect(await Promise.all([svc.core.refunds.settleStale(10), svc.core.refunds.settleStale(10)]).then((n) => n[0] + n[1])).toBe(1);
    expect(await svc.core.refunds.settleStale(10)).toBe(0);
    expect(await getOrder(id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 400 });
    expect((await svc.db.knex('refunds').where({ id: 're_stalerefund1' }).first()).status).toBe('succeeded');
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });
});

describe('refunds in another currency, and an acquirer that does not answer', () => {
  it('converts refunds as a running total: a thousand-part refund in fils adds up to the converted capture', async () => {
    const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody({ reference: 'kwd-parts', amount: 1000, currency: 'KWD', line_items: [] }) });
    const id = created.json().id as string;
    await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers: { authorization: `Bearer ${shop.test_secret_key}` } });
    // 1 fils is 0.299 cents: refund by refund, each would round to 0 EUR and the merchant would never pay them.
    for (let i = 0; i < 10; i++) expect((await refund(id, { amount: 1, reason: 'other' })).json().status).toBe('succeeded');
    expect((await refund(id, { reason: 'other' })).json()).toMatchObject({ amount: 990, status: 'succeeded' });
    const net = (await svc.db.knex('ledger_entries').where({ order_id: id }).groupBy('account', 'currency').select('account', 'currency').sum({ total: 'amount' })) as { account: string; currency: string; total: string }[];
    const of = (account: string, currency: string) => Number(net.find((n) => n.account === account && n.currency.trim() === currency)?.total ?? 0);
    const fees = -of('fees_earned', 'EUR');
    expect(fees).toBeGreaterThan(0);
    // Everything went back to the card; the merchant owes exactly the fees kept; conversion nets zero in both currencies.
    expect([of('acquirer_clearing', 'KWD'), of('currency_conversion', 'KWD'), of('currency_conversion', 'EUR'), of('merchant_pending', 'EUR')]).toEqual([0, 0, 0, fees]);
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('answers pending when the acquirer fails, holds the amount, and the sweeper settles it later', async () => {
    const id = await paidOrder({ reference: 'acquirer-down' });
    const original = SimulatedProcessor.prototype.refund;
    SimulatedProcessor.prototype.refund = async () => {
      throw new Error('acquirer timed out');
    };
    let res;
    try {
      res = await refund(id, { amount: 500, reason: 'other' });
    } finally {
      SimulatedProcessor.prototype.refund = original;
    }
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ status: 'pending', amount: 500 });
    expect(await getOrder(id)).toMatchObject({ status: 'paid', amount_refunded: 0 });
    const tooMuch = await refund(id, { amount: 2001, reason: 'other' });
    expect(tooMuch.json().error.code).toBe('refund_exceeds_remaining');
    // A minute later the sweeper asks again under the same id.
    await svc.db.knex('refunds').where({ id: res.json().id }).update({ updated_at: new Date(Date.now() - 120_000) });
    expect(await svc.core.refunds.settleStale(10)).toBe(1);
    expect(await getOrder(id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 500 });
    expect(await svc.core.ledger.verify()).toBeUndefined();
    svc.internalErrors.length = 0; // the injected failure was reported as a background error, as it should be
  });
});
