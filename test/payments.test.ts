import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectError, Code } from '@connectrpc/connect';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { ibanValid } from '../src/modules/payment/domain/iban.ts';
import { insertLeftBehind, processingAttempt, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';
import { payWithTestCard } from './support/payments.ts';
import { startTestShop, type TestCardDetails, type TestShop } from './support/test-shop.ts';
import { PostgresUnitOfWork } from '../src/kernel/adapters/postgres/postgres-unit-of-work.ts';
import { postgresScope } from '../src/composition/modules.ts';

/** The sandbox shop this suite pays with, and its builders (test/support/test-shop.ts). */
let t: TestShop;
let svc: TestService;

beforeAll(async () => {
  t = await startTestShop('Payments shop');
  svc = t.svc;
});
afterAll(async () => {
  await t?.svc.close();
});

async function restOrder(id: string, key = t.shop.test_secret_key) {
  return (await svc.app.inject({ method: 'GET', url: `/v1/orders/${id}`, headers: { authorization: `Bearer ${key}` } })).json();
}

function pay(checkoutId: string, token: string, cardDetails: TestCardDetails, submissionId = crypto.randomUUID()) {
  return t.checkout.submitCardPayment({ checkoutId, submissionId, card: cardDetails }, { headers: { 'checkout-token': token } });
}

describe('test paths', () => {
  it('approved outright: paid on the primary route, order.paid with exactly the spec data and settlement', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    const { outcome } = await pay(checkoutId, token, t.card('approved'));
    expect(outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    expect(outcome?.checkout?.receipt).toMatchObject({ method: 'card', cardBrand: 'visa', cardLast4: t.card('approved').number.slice(-4) });
    const paid = await restOrder(order.id);
    expect(paid).toMatchObject({ status: 'paid', method: 'card', settlement: { currency: 'EUR', amount: 2500 - 35 - 25 } });
    expect(paid.attempts).toHaveLength(1);
    expect(paid.attempts[0]).toMatchObject({ route: 'simulated_alpha', status: 'succeeded', authentication: 'not_required', retry: false, card_brand: 'visa' });
    const events = await t.eventsOf(order.id);
    expect(events.map((e) => [e.type, e.sequence])).toEqual([
      ['order.created', 1],
      ['order.paid', 2],
    ]);
    expect(events[1].data).toEqual({ id: order.id, reference: order.reference, amount: 2500, currency: 'EUR', method: 'card', settlement: { currency: 'EUR', amount: 2440 } });
  });

  it('challenge passed: requires authentication, then paid with authentication passed', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    const first = (await pay(checkoutId, token, t.card('challenge'))).outcome!;
    expect(first.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    expect(first.challenge?.hint).toContain('123456');
    expect((await restOrder(order.id)).status).toBe('pending');
    const done = (await t.checkout.completeAuthentication({ checkoutId, attemptId: first.challenge!.attemptId, code: '123456' }, { headers: { 'checkout-token': token } })).outcome!;
    expect(done.status).toBe(PaymentStatus.SUCCEEDED);
    const paid = await restOrder(order.id);
    expect(paid.status).toBe('paid');
    expect(paid.attempts[0]).toMatchObject({ status: 'succeeded', authentication: 'passed', card_brand: 'mastercard' });
  });

  it('challenge failed: authentication_failed, order.failed, then another card pays', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    const first = (await pay(checkoutId, token, t.card('challenge'))).outcome!;
    const failed = (await t.checkout.completeAuthentication({ checkoutId, attemptId: first.challenge!.attemptId, code: '000000' }, { headers: { 'checkout-token': token } })).outcome!;
    expect(failed.status).toBe(PaymentStatus.FAILED);
    expect(failed.declineCode).toBe('authentication_failed');
    expect((await restOrder(order.id)).status).toBe('failed');
    const retry = (await pay(checkoutId, token, t.card('approved'))).outcome!;
    expect(retry.status).toBe(PaymentStatus.SUCCEEDED);
    const events = await t.eventsOf(order.id);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.failed', 'order.paid']);
    expect(events[1].data.reason).toMatchObject({ decline_code: 'authentication_failed', route: 'simulated_alpha', retried: false });
  });

  it('challenge abandoned: authentication_failed with authentication abandoned', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    const first = (await pay(checkoutId, token, t.card('challenge'))).outcome!;
    const abandoned = (await t.checkout.completeAuthentication({ checkoutId, attemptId: first.challenge!.attemptId, abandon: true }, { headers: { 'checkout-token': token } })).outcome!;
    expect(abandoned).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'authentication_failed' });
    expect((await restOrder(order.id)).attempts[0]).toMatchObject({ status: 'failed', authentication: 'abandoned' });
  });

  it('soft decline: insufficient funds on the primary route, approved on the alternative', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    const { outcome } = await pay(checkoutId, token, t.card('soft_decline'));
    expect(outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    const paid = await restOrder(order.id);
    expect(paid.status).toBe('paid');
    expect(paid.attempts.map((a: { route: string; status: string; decline_code: string | null; retry: boolean }) => [a.route, a.status, a.decline_code, a.retry])).toEqual([
      ['simulated_alpha', 'failed', 'insufficient_funds', false],
      ['simulated_beta', 'succeeded', null, true],
    ]);
    expect((await t.eventsOf(order.id)).map((e) => e.type)).toEqual(['order.created', 'order.paid']);
  });

  it('hard decline: expired card, no retry, order.failed naming the route', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    const { outcome } = await pay(checkoutId, token, t.card('hard_decline'));
    expect(outcome).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'expired_card' });
    expect(outcome?.message).toMatch(/expired/i);
    const failed = await restOrder(order.id);
    expect(failed.status).toBe('failed');
    expect(failed.attempts).toHaveLength(1);
    const events = await t.eventsOf(order.id);
    expect(events.at(-1)).toMatchObject({ type: 'order.failed', sequence: 2 });
    expect(events.at(-1).data.reason).toMatchObject({ decline_code: 'expired_card', route: 'simulated_alpha', retried: false });
  });

  it('declines a card that is not one of this sandbox\'s test cards, even another sandbox\'s', async () => {
    const other = await svc.sandbox('Other sandbox');
    const { checkoutId, token } = await t.createOrder();
    const { outcome } = await pay(checkoutId, token, t.card('approved', other));
    expect(outcome).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'test_card_unknown' });
  });

  it('declines a test card with a live key as a test card', async () => {
    const { order, checkoutId, token } = await t.createOrder(t.shop.live_secret_key);
    const { outcome } = await pay(checkoutId, token, t.card('approved'));
    expect(outcome).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'test_card_in_live_mode' });
    expect((await restOrder(order.id, t.shop.live_secret_key)).status).toBe('failed');
  });

  it('wallet pays in test mode', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    const { outcome } = await t.checkout.submitWalletPayment({ checkoutId, submissionId: 'w-1' }, { headers: { 'checkout-token': token } });
    expect(outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    expect(await restOrder(order.id)).toMatchObject({ status: 'paid', method: 'wallet' });
  });

  it('simulated transfer pays a test order; a live key is refused and changes nothing', async () => {
    const { order, checkoutId } = await t.createOrder();
    const view = (await t.checkout.getCheckout({ checkoutId })).checkout!;
    expect(ibanValid(view.bankTransfer!.iban)).toBe(true);
    expect(view.bankTransfer?.reference).toBe(order.reference);
    const live = await t.createOrder(t.shop.live_secret_key);
    const refused = await t.simulateTransfer(live.id, t.shop.live_secret_key);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('test_mode_only');
    expect((await restOrder(live.id, t.shop.live_secret_key)).status).toBe('pending');

    const res = await t.simulateTransfer(order.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'paid', method: 'bank_transfer' });
    const again = await t.simulateTransfer(order.id);
    expect(again.statusCode).toBe(422);
    expect(again.json().error.code).toBe('order_already_paid');
  });
});

describe('safety', () => {
  it('charges once for a double click (same submission) and for racing submissions', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    const submission = crypto.randomUUID();
    const settled = await Promise.allSettled([
      pay(checkoutId, token, t.card('soft_decline'), submission),
      pay(checkoutId, token, t.card('soft_decline'), submission),
      pay(checkoutId, token, t.card('approved')),
      pay(checkoutId, token, t.card('approved')),
    ]);
    const succeeded = settled.filter((s) => s.status === 'fulfilled' && s.value.outcome?.status === PaymentStatus.SUCCEEDED);
    expect(succeeded.length).toBeGreaterThanOrEqual(1);
    for (const s of settled) {
      // A racing submission is told the payment is in progress, or, if it arrives later, that the order is paid.
      if (s.status === 'rejected') expect([Code.Aborted, Code.FailedPrecondition]).toContain(ConnectError.from(s.reason).code);
    }
    const paid = await restOrder(order.id);
    expect(paid.status).toBe('paid');
    expect(paid.attempts.filter((a: { status: string }) => a.status === 'succeeded')).toHaveLength(1);
    expect((await t.eventsOf(order.id)).filter((e) => e.type === 'order.paid')).toHaveLength(1);
  });

  it('refuses while an attempt is processing, but clears one a crashed process left behind', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    await insertLeftBehind(svc.db.knex, [processingAttempt({ id: 'att_fresh', orderId: order.id, merchantId: t.shop.merchant_id, at: new Date() })]);
    await expect(pay(checkoutId, token, t.card('approved'))).rejects.toMatchObject({ code: Code.Aborted });
    await svc.db.knex('payment_attempts').where({ id: 'att_fresh' }).update({ updated_at: new Date(Date.now() - 3 * 60_000) });
    expect((await pay(checkoutId, token, t.card('approved'))).outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    const attempts = (await restOrder(order.id)).attempts;
    expect(attempts.find((a: { id: string }) => a.id === 'att_fresh')).toMatchObject({ status: 'failed', decline_code: 'processing_unavailable' });
  });

  it('shows a paid order as paid and refuses a second payment', async () => {
    const { checkoutId, token } = await t.createOrder();
    await pay(checkoutId, token, t.card('approved'));
    await expect(pay(checkoutId, token, t.card('approved'))).rejects.toMatchObject({ code: Code.FailedPrecondition });
  });

  it('refuses calls without the checkout token', async () => {
    const { order, checkoutId } = await t.createOrder();
    await expect(pay(checkoutId, 'wrong-token', t.card('approved'))).rejects.toMatchObject({ code: Code.PermissionDenied });
    expect((await restOrder(order.id)).attempts).toEqual([]);
  });

  it('stops at 10 attempts per order', async () => {
    const { checkoutId, token } = await t.createOrder();
    for (let i = 0; i < 10; i++) {
      expect((await pay(checkoutId, token, t.card('hard_decline'))).outcome?.status).toBe(PaymentStatus.FAILED);
    }
    await expect(pay(checkoutId, token, t.card('approved'))).rejects.toMatchObject({ code: Code.ResourceExhausted });
  });

  it('never stores the card number or the CVC', async () => {
    const details = t.card('approved');
    const { checkoutId, token } = await t.createOrder();
    await pay(checkoutId, token, { ...details, cvc: '987' });
    const tables = ['orders', 'payment_attempts', 'events', 'test_cards', 'idempotency_keys'];
    for (const table of tables) {
      const dump = JSON.stringify(await svc.db.knex(table).select('*'));
      expect(dump, table).not.toContain(details.number);
      expect(dump, table).not.toContain(details.number.slice(0, 12));
    }
    const attempts = JSON.stringify(await svc.db.knex('payment_attempts').select('*'));
    expect(attempts).not.toMatch(/"987"/);
  });

  it('rejects an invalid card before any attempt is recorded', async () => {
    const { order, checkoutId, token } = await t.createOrder();
    await expect(pay(checkoutId, token, { ...t.card('approved'), number: '4242424242424241' })).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(pay(checkoutId, token, { ...t.card('approved'), expYear: 2020 })).rejects.toMatchObject({ code: Code.InvalidArgument });
    expect((await restOrder(order.id)).attempts).toEqual([]);
  });
});

describe('expiry', () => {
  it('expires an order past expires_at: sweep, order.expired, and no payment after', async () => {
    const expiresAt = new Date(Date.now() + 10 * 60_000).toISOString();
    const { order, checkoutId, token } = await t.createOrder(t.shop.test_secret_key, { expires_at: expiresAt });
    expect(order.expires_at).toBe(expiresAt);
    await svc.db.knex('orders').where({ id: order.id }).update({ expires_at: new Date(Date.now() - 1000) });
    expect(await svc.core.payments.expireDue(100)).toBeGreaterThanOrEqual(1);
    expect((await restOrder(order.id)).status).toBe('expired');
    expect((await t.eventsOf(order.id)).map((e) => e.type)).toEqual(['order.created', 'order.expired']);
    await expect(pay(checkoutId, token, t.card('approved'))).rejects.toMatchObject({ code: Code.FailedPrecondition });
  });

  it('rejects expires_at outside 5 minutes to 30 days', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${t.shop.test_secret_key}`, 'content-type': 'application/json' },
      payload: orderBody({ expires_at: new Date(Date.now() + 60_000).toISOString() }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'expires_at_invalid', param: 'expires_at' });
  });
});

describe('a payment change run alone (no transaction around it)', () => {
  it('writes nothing when its attempt is missing: the payment keeps its state', async () => {
    const { order } = await t.createOrder();
    await payWithTestCard(svc.core.routes, t.shop, order.id);
    const payment = await svc.db.knex('payments').where({ order_id: order.id }).first();
    const record = await new PostgresUnitOfWork(svc.db.knex, postgresScope).runAlone((tx) => tx.payments.findBySubmission(order.id, payment.submission_id));
    const leg = record!.attempts[0]!;
    const ghost = { payment: { ...record!.payment, status: 'processing' as const, updatedAt: new Date() }, leg: { ...leg, id: 'att_ghost', status: 'processing' as const } };
    await expect(new PostgresUnitOfWork(svc.db.knex, postgresScope).runAlone((tx) => tx.payments.recordAuthorization(ghost))).rejects.toThrow(/att_ghost not found/);
    expect(await svc.db.knex('payments').where({ id: payment.id }).first()).toEqual(payment);
  });
});
