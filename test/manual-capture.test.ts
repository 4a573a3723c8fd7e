// Manual capture on the real Postgres: orders created with capture_method "manual" are authorized when
// the customer pays (card, 3-D Secure, wallet), then captured in full or in part, voided, or released
// by the sweeper after 7 days. Automatic orders and transfers are unchanged. Every test ends with the
// ledger verified (test/support/service.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { CheckoutService, PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { createCore } from '../src/composition/core.ts';
import { SimulatedProcessor } from '../src/modules/payment/adapters/simulator/simulated-processor.ts';
import { AUTHORIZATION_VALIDITY_MS } from '../src/modules/order/domain/capture.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { pageToken, payWithTestCard } from './support/payments.ts';
import { startTestService, TEST_API_URL, TEST_CHECKOUT_URL, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Manual capture shop');
});
afterAll(async () => {
  await svc?.close();
});

const headers = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', ...extra });

async function createOrder(overrides: Record<string, unknown> = {}): Promise<string> {
  const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody({ amount: 2500, line_items: [], capture_method: 'manual', ...overrides }) });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().id as string;
}

/** A manual order the customer paid by the approved test card: authorized, nothing captured. */
async function authorizedOrder(overrides: Record<string, unknown> = {}): Promise<string> {
  const id = await createOrder(overrides);
  const { outcome } = await payWithTestCard(svc.core.routes, shop, id);
  expect(outcome?.status).toBe(PaymentStatus.SUCCEEDED);
  return id;
}

const getOrder = async (id: string) => (await svc.app.inject({ method: 'GET', url: `/v1/orders/${id}`, headers: headers() })).json();

function capture(id: string, body?: Record<string, unknown>, extra: Record<string, string> = {}) {
  return svc.app.inject({
    method: 'POST',
    url: `/v1/orders/${id}/capture`,
    headers: body === undefined ? { authorization: `Bearer ${shop.test_secret_key}`, ...extra } : headers(extra),
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

const voidOrder = (id: string) => svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/void`, headers: { authorization: `Bearer ${shop.test_secret_key}` } });

const ledgerOf = async (orderId: string) =>
  Object.fromEntries(
    ((await svc.db.knex('ledger_entries').where({ order_id: orderId }).groupBy('account').select('account').sum({ total: 'amount' })) as { account: string; total: string }[]).map((b) => [
      b.account,
      Number(b.total),
    ]),
  );

const eventsOf = async (orderId: string) => (await svc.db.knex('events').where({ order_id: orderId }).orderBy('sequence')) as { type: string; sequence: number; data: Record<string, unknown> }[];

describe('manual capture: authorization', () => {
  it('authorizes a manual card order: status authorized, order.authorized in the event log, no ledger transaction', async () => {
    const id = await authorizedOrder({ reference: 'manual-card' });
    const order = await getOrder(id);
    expect(order).toMatchObject({ status: 'authorized', capture_method: 'manual', amount_captured: null, method: 'card', settlement: null });
    expect(order.attempts.map((a: { status: string }) => a.status)).toEqual(['authorized']);
    const expiresAt = new Date(order.authorization_expires_at).getTime();
    expect(expiresAt - new Date(order.attempts[0].created).getTime()).toBeGreaterThanOrEqual(AUTHORIZATION_VALIDITY_MS - 60_000);
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.authorized']);
    expect(events[1]!.data).toEqual({
      id,
      reference: 'manual-card',
      amount: 2500,
      currency: 'EUR',
      method: 'card',
      amount_authorized: 2500,
      authorization_expires_at: order.authorization_expires_at,
    });
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id })).toHaveLength(0);
    expect((await svc.db.knex('payments').where({ order_id: id }).first()).status).toBe('authorized');
  });

  it('authorizes after a 3-D Secure challenge, and a wallet payment, the same way', async () => {
    const checkout = createClient(CheckoutService, createRouterTransport(svc.core.routes));
    const challenged = await createOrder({ reference: 'manual-3ds' });
    const first = (await payWithTestCard(svc.core.routes, shop, challenged, { behaviour: 'challenge' })).outcome!;
    expect(first.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    const token = await pageToken(svc.core.routes, challenged.slice(4));
    const done = (await checkout.completeAuthentication({ checkoutId: challenged.slice(4), attemptId: first.challenge!.attemptId, code: '123456' }, { headers: { 'checkout-token': token } })).outcome!;
    expect(done.status).toBe(PaymentStatus.SUCCEEDED);
    expect(await getOrder(challenged)).toMatchObject({ status: 'authorized', attempts: [{ status: 'authorized', authentication: 'passed' }] });

    const wallet = await createOrder({ reference: 'manual-wallet' });
    const walletToken = await pageToken(svc.core.routes, wallet.slice(4));
    const paid = (await checkout.submitWalletPayment({ checkoutId: wallet.slice(4), submissionId: 'wallet-1' }, { headers: { 'checkout-token': walletToken } })).outcome!;
    expect(paid.status).toBe(PaymentStatus.SUCCEEDED);
    expect(await getOrder(wallet)).toMatchObject({ status: 'authorized', method: 'wallet' });
    for (const id of [challenged, wallet]) expect((await eventsOf(id)).map((e) => e.type)).toEqual(['order.created', 'order.authorized']);
    expect(await svc.db.knex('ledger_transactions').whereIn('order_id', [challenged, wallet])).toHaveLength(0);
  });

  it('shows the customer an authorized receipt, not a payment form, and takes no second payment', async () => {
    const id = await authorizedOrder({ reference: 'manual <page>' });
    const page = await svc.app.inject({ method: 'GET', url: `/c/${id.slice(4)}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Payment authorized');
    expect(page.body).toContain('Nothing has been charged yet');
    expect(page.body).toContain('manual &lt;page&gt;');
    expect(page.body).not.toContain('manual <page>');
    expect(page.body).not.toContain('id="card-form"');
    await expect(payWithTestCard(svc.core.routes, shop, id, { submissionId: 'second' })).rejects.toThrow(/already been paid/);
  });

  it('captures a bank transfer to a manual order at once: a transfer is money already moved', async () => {
    const id = await createOrder({ reference: 'manual-transfer' });
    const res = await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers: { authorization: `Bearer ${shop.test_secret_key}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await getOrder(id)).toMatchObject({ status: 'paid', method: 'bank_transfer', amount_captured: 2500 });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['order.created', 'order.paid']);
    expect(await ledgerOf(id)).toEqual({ acquirer_clearing: 2500, merchant_pending: -2440, fees_earned: -60 });
    expect((await capture(id)).json().error.code).toBe('order_not_capturable');
  });

  it('leaves automatic orders as they were: paid at once, capture_method automatic, not capturable', async () => {
    const id = await createOrder({ reference: 'automatic', capture_method: undefined });
    const order = await getOrder(id);
    expect(order).toMatchObject({ capture_method: 'automatic', status: 'pending', amount_captured: null, authorization_expires_at: null });
    await payWithTestCard(svc.core.routes, shop, id);
    expect(await getOrder(id)).toMatchObject({ status: 'paid', capture_method: 'automatic', amount_captured: 2500, authorization_expires_at: null });
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.paid']);
    expect(events[1]!.data).toEqual({ id, reference: 'automatic', amount: 2500, currency: 'EUR', method: 'card', settlement: { currency: 'EUR', amount: 2440 } });
    const res = await capture(id);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'order_not_capturable' });
    expect(res.json().error.message).toContain('automatic');
  });

  it('refuses an unknown capture_method with a 400', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody({ capture_method: 'later' }) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.param).toBe('capture_method');
  });
});

describe('manual capture: capture', () => {
  it('captures in full: order.paid, the capture in the ledger with fees on it, the balance', async () => {
    const id = await authorizedOrder({ reference: 'capture-full' });
    const before = (await svc.app.inject({ method: 'GET', url: '/v1/balance', headers: headers() })).json();
    const res = await capture(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'paid', amount_captured: 2500, settlement: { currency: 'EUR', amount: 2440 }, authorization_expires_at: null, attempts: [{ status: 'succeeded' }] });
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.authorized', 'order.paid']);
    expect(events[2]!.data).toEqual({ id, reference: 'capture-full', amount: 2500, currency: 'EUR', method: 'card', settlement: { currency: 'EUR', amount: 2440 }, amount_captured: 2500 });
    const payment = await svc.db.knex('payments').where({ order_id: id }).first();
    expect(payment).toMatchObject({ status: 'succeeded', captured_amount: '2500' });
    const entries = await svc.db.knex('ledger_entries').where({ transaction_id: `ltx_capture_${payment.id}` }).orderBy('id');
    expect(entries.map((e) => [e.account, Number(e.amount), e.purpose])).toEqual([
      ['acquirer_clearing', 2500, 'gross'],
      ['merchant_pending', -2500, 'gross'],
      ['merchant_pending', 35, 'percentage_fee'],
      ['fees_earned', -35, 'percentage_fee'],
      ['merchant_pending', 25, 'fixed_fee'],
      ['fees_earned', -25, 'fixed_fee'],
    ]);
    const after = (await svc.app.inject({ method: 'GET', url: '/v1/balance', headers: headers() })).json();
    const pending = (b: { pending: { currency: string; amount: number }[] }) => b.pending.find((p) => p.currency === 'EUR')?.amount ?? 0;
    expect(pending(after) - pending(before)).toBe(2440);
  });

  it('captures part of the authorization: fees on what was captured, the rest released, refunds bounded by the capture', async () => {
    const id = await authorizedOrder({ reference: 'capture-part' });
    const res = await capture(id, { amount: 1000 });
    expect(res.statusCode, res.body).toBe(200);
    // 1.4 % of 10.00 is 0.14, plus 0.25: the merchant is owed 9.61.
    expect(res.json()).toMatchObject({ status: 'paid', amount: 2500, amount_captured: 1000, settlement: { currency: 'EUR', amount: 961 } });
    expect((await eventsOf(id)).at(-1)!.data).toMatchObject({ amount: 2500, amount_captured: 1000, settlement: { currency: 'EUR', amount: 961 } });
    expect(await ledgerOf(id)).toEqual({ acquirer_clearing: 1000, merchant_pending: -961, fees_earned: -39 });
    const tooMuch = await svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/refunds`, headers: headers(), payload: JSON.stringify({ amount: 1001, reason: 'other' }) });
    expect(tooMuch.statusCode).toBe(400);
    expect(tooMuch.json().error.code).toBe('refund_exceeds_remaining');
    const all = await svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/refunds`, headers: headers(), payload: JSON.stringify({ reason: 'other' }) });
    expect(all.json()).toMatchObject({ amount: 1000, status: 'succeeded' });
    expect(await getOrder(id)).toMatchObject({ status: 'refunded', amount_refunded: 1000, amount_captured: 1000 });
  });

  it('refuses an amount above the authorization, zero, and a non-integer, and leaves the order authorized', async () => {
    const id = await authorizedOrder({ reference: 'capture-over' });
    const over = await capture(id, { amount: 2501 });
    expect(over.statusCode).toBe(400);
    expect(over.json().error).toMatchObject({ type: 'invalid_request_error', code: 'capture_exceeds_authorized', param: 'amount' });
    expect(over.json().error.message).toContain('2500');
    const zero = await capture(id, { amount: 0 });
    expect(zero.statusCode).toBe(400);
    expect(zero.json().error).toMatchObject({ param: 'amount' });
    expect((await capture(id, { amount: 10.5 })).statusCode).toBe(400);
    expect(await getOrder(id)).toMatchObject({ status: 'authorized', amount_captured: null });
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id })).toHaveLength(0);
  });

  it('refuses to capture an order that is not authorized: pending, paid, voided (409 order_not_capturable)', async () => {
    const pending = await createOrder({ reference: 'capture-pending' });
    const res = await capture(pending);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'order_not_capturable' });
    const paid = await authorizedOrder({ reference: 'capture-twice' });
    expect((await capture(paid)).statusCode).toBe(200);
    const again = await capture(paid);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.message).toContain('captured already');
    const missing = await capture('ord_0000000000000000000000');
    expect(missing.statusCode).toBe(404);
  });

  it('replays a capture with the same Idempotency-Key: one capture, the same answer; another request with the key is refused', async () => {
    const id = await authorizedOrder({ reference: 'capture-key' });
    const first = await capture(id, { amount: 2000 }, { 'idempotency-key': 'capture-once' });
    const replay = await capture(id, { amount: 2000 }, { 'idempotency-key': 'capture-once' });
    expect(first.statusCode, first.body).toBe(200);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(first.json()).toMatchObject({ status: 'paid', amount_captured: 2000 });
    const reused = await capture(id, { amount: 1000 }, { 'idempotency-key': 'capture-once' });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error.code).toBe('idempotency_key_reused');
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id, kind: 'capture' })).toHaveLength(1);
    expect((await eventsOf(id)).filter((e) => e.type === 'order.paid')).toHaveLength(1);
  });

  it('captures exactly once under 20 concurrent captures: the order row lock decides', async () => {
    const id = await authorizedOrder({ reference: 'capture-race' });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => capture(id, { amount: 1000 + i })));
    const ok = answers.filter((r) => r.statusCode === 200);
    const refused = answers.filter((r) => r.statusCode === 409);
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const r of refused) expect(r.json().error.code).toBe('order_not_capturable');
    const captured = ok[0]!.json().amount_captured as number;
    const payment = await svc.db.knex('payments').where({ order_id: id }).first();
    expect(Number(payment.captured_amount)).toBe(captured);
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id, kind: 'capture' })).toHaveLength(1);
    expect((await ledgerOf(id)).acquirer_clearing).toBe(captured);
    expect((await eventsOf(id)).filter((e) => e.type === 'order.paid')).toHaveLength(1);
    expect(await svc.core.ledger.verify()).toBeUndefined();
    expect(svc.internalErrors).toEqual([]);
  });
});

describe('manual capture: an acquirer that does not answer, a process that stops', () => {
  it('keeps the request when the acquirer does not answer: the order stays authorized, cannot be voided, released or captured twice, and the sweeper finishes it', async () => {
    const id = await authorizedOrder({ reference: 'capture-acquirer-down' });
    const original = SimulatedProcessor.prototype.capture;
    SimulatedProcessor.prototype.capture = async () => {
      throw new Error('acquirer timed out');
    };
    let res;
    try {
      res = await capture(id, { amount: 2000 });
    } finally {
      SimulatedProcessor.prototype.capture = original;
    }
    // The answer tells the order as it stands: authorized, the capture under way.
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'authorized', amount_captured: null });
    expect(await svc.db.knex('capture_requests').where({ order_id: id })).toHaveLength(1);
    expect((await capture(id, { amount: 500 })).json().error).toMatchObject({ code: 'order_not_capturable', message: expect.stringMatching(/under way/) });
    expect((await voidOrder(id)).json().error).toMatchObject({ code: 'order_not_voidable', message: expect.stringMatching(/under way/) });

    // Past its expiry, the release sweeper leaves it alone; a minute on, the capture sweeper finishes it.
    const expiresAt = new Date((await getOrder(id)).authorization_expires_at).getTime();
    const later = createCore({ knex: svc.db.knex, apiBaseUrl: TEST_API_URL, checkoutHost: TEST_CHECKOUT_URL, onInternalError: () => undefined, clock: { now: () => new Date(expiresAt + 1) } });
    await later.payments.releaseAuthorizations(100);
    expect(await getOrder(id)).toMatchObject({ status: 'authorized' });
    expect(await later.captures.completeStale(100)).toBeGreaterThanOrEqual(1);
    expect(await getOrder(id)).toMatchObject({ status: 'paid', amount_captured: 2000 });
    expect(await svc.db.knex('capture_requests').where({ order_id: id })).toHaveLength(0);
    expect((await eventsOf(id)).filter((e) => e.type === 'order.paid')).toHaveLength(1);
    expect((await ledgerOf(id)).acquirer_clearing).toBe(2000);
    expect(await svc.core.ledger.verify()).toBeUndefined();
    svc.internalErrors.length = 0; // the injected failure was reported as a background error, as it should be
  });

  it('a retry with the same Idempotency-Key finishes a capture the acquirer did not answer; another key is refused meanwhile', async () => {
    const id = await authorizedOrder({ reference: 'capture-retried' });
    const original = SimulatedProcessor.prototype.capture;
    SimulatedProcessor.prototype.capture = async () => {
      throw new Error('connection reset');
    };
    try {
      expect((await capture(id, { amount: 1200 }, { 'idempotency-key': 'cap-retry-1' })).json()).toMatchObject({ status: 'authorized' });
      // Another request for it, even while the acquirer is still down, is refused: one capture at a time.
      expect((await capture(id, { amount: 1200 }, { 'idempotency-key': 'cap-retry-2' })).statusCode).toBe(409);
    } finally {
      SimulatedProcessor.prototype.capture = original;
    }
    const retried = await capture(id, { amount: 1200 }, { 'idempotency-key': 'cap-retry-1' });
    expect(retried.statusCode).toBe(200);
    expect(retried.json()).toMatchObject({ status: 'paid', amount_captured: 1200 });
    // The sweeper then finds nothing left to do.
    expect(await svc.core.captures.completeStale(100)).toBe(0);
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id, kind: 'capture' })).toHaveLength(1);
    expect((await eventsOf(id)).filter((e) => e.type === 'order.paid')).toHaveLength(1);
    expect(await svc.core.ledger.verify()).toBeUndefined();
    svc.internalErrors.length = 0;
  });
});

describe('manual capture: voids and releases', () => {
  it('voids an authorized order: the authorization released, order.voided, nothing in the ledger; then it cannot be captured', async () => {
    const id = await authorizedOrder({ reference: 'void-authorized' });
    const res = await voidOrder(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'voided', amount_captured: null, authorization_expires_at: null, attempts: [{ status: 'canceled' }] });
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.authorized', 'order.voided']);
    expect(events[2]!.data).toEqual({ id, reference: 'void-authorized', amount: 2500, currency: 'EUR', reason: 'requested' });
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id })).toHaveLength(0);
    expect((await voidOrder(id)).json()).toMatchObject({ status: 'voided' });
    expect((await capture(id)).json().error.code).toBe('order_not_capturable');
    // The voided order's page is closed.
    expect((await svc.app.inject({ method: 'GET', url: `/c/${id.slice(4)}` })).body).not.toContain('Payment authorized');
  });

  it('still voids a captured order before settlement as before: the capture undone in the ledger', async () => {
    const id = await authorizedOrder({ reference: 'void-captured' });
    expect((await capture(id, { amount: 1500 })).statusCode).toBe(200);
    const res = await voidOrder(id);
    expect(res.json()).toMatchObject({ status: 'voided', amount_captured: 1500 });
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id, kind: 'void' })).toHaveLength(1);
    expect(await ledgerOf(id)).toEqual({ acquirer_clearing: 0, merchant_pending: 0, fees_earned: 0 });
  });

  it('releases an authorization not captured within 7 days through the sweeper, driven by the clock', async () => {
    const id = await authorizedOrder({ reference: 'release-late' });
    const authorizedAt = new Date((await getOrder(id)).authorization_expires_at).getTime() - AUTHORIZATION_VALIDITY_MS;
    const voids: string[] = [];
    let now = authorizedAt + AUTHORIZATION_VALIDITY_MS - 60_000;
    const later = createCore({ knex: svc.db.knex, apiBaseUrl: TEST_API_URL, checkoutHost: TEST_CHECKOUT_URL, onInternalError: (err) => voids.push(String(err)), clock: { now: () => new Date(now) } });
    // A minute before its time, nothing happens to it.
    await later.payments.releaseAuthorizations(100);
    expect(await getOrder(id)).toMatchObject({ status: 'authorized' });
    now = authorizedAt + AUTHORIZATION_VALIDITY_MS;
    expect(await later.payments.releaseAuthorizations(100)).toBeGreaterThanOrEqual(1);
    const order = await getOrder(id);
    expect(order).toMatchObject({ status: 'voided', authorization_expires_at: null, attempts: [{ status: 'canceled' }] });
    const leg = await svc.db.knex('payment_attempts').where({ order_id: id }).first();
    expect(leg.cancellation_reason).toBe('authorization_expired');
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.authorized', 'order.voided']);
    expect(events[2]!.data).toMatchObject({ reason: 'authorization_expired' });
    expect(await svc.db.knex('ledger_transactions').where({ order_id: id })).toHaveLength(0);
    // Released once: a second sweep finds nothing of it.
    await later.payments.releaseAuthorizations(100);
    expect((await eventsOf(id)).filter((e) => e.type === 'order.voided')).toHaveLength(1);
    expect(voids).toEqual([]);
  });

  it('refuses a capture once the authorization ran out, before the sweeper released it', async () => {
    const id = await authorizedOrder({ reference: 'capture-late' });
    const expiresAt = new Date((await getOrder(id)).authorization_expires_at).getTime();
    const later = createCore({ knex: svc.db.knex, apiBaseUrl: TEST_API_URL, checkoutHost: TEST_CHECKOUT_URL, onInternalError: () => undefined, clock: { now: () => new Date(expiresAt + 1) } });
    const { buildGateway } = await import('../gateway/app.ts');
    const app = await buildGateway({ routes: later.routes, publicUrl: TEST_API_URL });
    try {
      const res = await app.inject({ method: 'POST', url: `/v1/orders/${id}/capture`, headers: { authorization: `Bearer ${shop.test_secret_key}` } });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toMatchObject({ code: 'order_not_capturable' });
      expect(res.json().error.message).toContain('ran out');
    } finally {
      await app.close();
    }
    expect(await getOrder(id)).toMatchObject({ status: 'authorized' });
  });
});
