// Expiring an open order on request (POST /v1/orders/:id/expire, OrderService.ExpireOrder), on the real
// Postgres: the sweeper's path taken early (order.expired in the same transaction, an open challenge
// canceled and released, a single-use link freed), idempotent, refused for paid orders and while a card
// payment is in flight, isolated by merchant and mode; the page and CheckoutService then treat the order
// as expired; a payment racing the expiry ends one way only. The ledger is verified at the end.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { OrderService, OrderStatus } from '../src/gen/checkout/v1/order_pb.ts';
import { ErrorDetailSchema } from '../src/gen/checkout/v1/errors_pb.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { SimulatedProcessor } from '../src/modules/payment/adapters/simulator/simulated-processor.ts';
import { payWithTestCard } from './support/payments.ts';
import { insertLeftBehind, processingAttempt, type TestService } from './support/service.ts';
import { startTestShop, type TestShop } from './support/test-shop.ts';

/** The sandbox shop this suite pays with, and its builders (test/support/test-shop.ts). */
let t: TestShop;
let svc: TestService;
let shop: SandboxCredentials;
let other: SandboxCredentials;

beforeAll(async () => {
  t = await startTestShop('Expiring shop');
  ({ svc, shop } = t);
  other = await svc.sandbox('Other shop');
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await t?.svc.close();
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function newOrder(key = shop.test_secret_key, overrides: Record<string, unknown> = {}): Promise<string> {
  return (await t.createOrder(key, overrides)).id;
}

const expire = (id: string, key = shop.test_secret_key, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/expire`, headers: { ...auth(key), ...headers } });

describe('POST /v1/orders/:id/expire', () => {
  it('expires a pending order now, with the sweeper\'s order.expired, once; a repeat answers it unchanged', async () => {
    const id = await newOrder(shop.test_secret_key, { reference: 'expire-me' });
    const scheduled = (await svc.db.knex('orders').where({ id }).first()).expires_at as Date;
    const res = await expire(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id, object: 'order', status: 'expired' });

    const events = await t.eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.expired']);
    // The same data as the sweeper's event (src/modules/order/domain/order-transitions.ts markExpired).
    expect(events[1]!.data).toEqual({ id, reference: 'expire-me', amount: 2500, currency: 'EUR', expires_at: scheduled.toISOString() });

    const again = await expire(id);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ id, status: 'expired' });
    expect((await t.eventsOf(id)).map((e) => e.type)).toEqual(['order.created', 'order.expired']);
    // The sweeper finds nothing left to do with it.
    await svc.db.knex('orders').where({ id }).update({ expires_at: new Date(Date.now() - 1000) });
    await svc.core.payments.expireDue(100);
    expect((await t.eventsOf(id)).filter((e) => e.type === 'order.expired')).toHaveLength(1);
  });

  it('expires a failed order (a declined payment leaves it open)', async () => {
    const id = await newOrder();
    const declined = await payWithTestCard(svc.core.routes, shop, id, { behaviour: 'hard_decline' });
    expect(declined.outcome?.status).toBe(PaymentStatus.FAILED);
    const res = await expire(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('expired');
    expect((await t.eventsOf(id)).map((e) => e.type)).toEqual(['order.created', 'order.failed', 'order.expired']);
  });

  it('honours an Idempotency-Key: the repeat is replayed, another order with the key is refused', async () => {
    const id = await newOrder();
    const first = await expire(id, shop.test_secret_key, { 'idempotency-key': 'expire-key-1' });
    expect(first.statusCode).toBe(200);
    const replay = await expire(id, shop.test_secret_key, { 'idempotency-key': 'expire-key-1' });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toMatchObject({ id, status: 'expired' });
    const otherOrder = await newOrder();
    const reused = await expire(otherOrder, shop.test_secret_key, { 'idempotency-key': 'expire-key-1' });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error.code).toBe('idempotency_key_reused');
    expect((await svc.db.knex('orders').where({ id: otherOrder }).first()).status).toBe('pending');
  });

  it('refuses a paid order with 409 order_not_open, and changes nothing', async () => {
    const id = await newOrder();
    expect((await payWithTestCard(svc.core.routes, shop, id)).outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    const res = await expire(id);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'order_not_open', message: expect.stringMatching(/paid.*void or refund/) });
    expect((await svc.db.knex('orders').where({ id }).first()).status).toBe('paid');
    expect((await t.eventsOf(id)).map((e) => e.type)).toEqual(['order.created', 'order.paid']);
  });

  it('refuses with 409 payment_in_progress while a card payment is being processed', async () => {
    const id = await newOrder();
    await insertLeftBehind(svc.db.knex, [processingAttempt({ id: 'att_expireinflight', orderId: id, merchantId: shop.merchant_id, at: new Date(), submissionId: 'in-flight' })]);
    const res = await expire(id);
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('payment_in_progress');
    expect((await svc.db.knex('orders').where({ id }).first()).status).toBe('pending');
    // A payment left processing by a crashed process no longer holds the order, as for the sweeper.
    await svc.db.knex('payment_attempts').where({ id: 'att_expireinflight' }).update({ updated_at: new Date(Date.now() - 3 * 60_000) });
    expect((await expire(id)).json().status).toBe('expired');
  });

  it('answers another merchant\'s order, and the other mode\'s, with 404, and leaves it open', async () => {
    const id = await newOrder();
    for (const key of [other.test_secret_key, shop.live_secret_key]) {
      const res = await expire(id, key);
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('resource_missing');
    }
    const live = await newOrder(shop.live_secret_key);
    expect((await expire(live)).statusCode).toBe(404);
    expect((await svc.db.knex('orders').whereIn('id', [id, live])).map((o) => o.status)).toEqual(['pending', 'pending']);
    const liveExpired = await expire(live, shop.live_secret_key);
    expect(liveExpired.statusCode).toBe(200);
    expect(liveExpired.json()).toMatchObject({ status: 'expired', livemode: true });
  });

  it('cancels an open 3-D Secure challenge and releases its authorization, as the sweeper does', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    const first = (await t.checkout.submitCardPayment({ checkoutId, submissionId: 'sub-3ds', card: t.card('challenge') }, { headers: { 'checkout-token': token } })).outcome!;
    expect(first.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    const released = vi.spyOn(SimulatedProcessor.prototype, 'void');

    const res = await expire(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().attempts.map((a: { status: string }) => a.status)).toEqual(['canceled']);
    expect((await t.attemptsOf(id))[0]).toMatchObject({ id: first.challenge!.attemptId, status: 'canceled', cancellation_reason: 'order_expired' });
    expect(released).toHaveBeenCalledTimes(1);
    expect(released.mock.calls[0]![0]).toBe((await t.attemptsOf(id))[0].processor_ref);

    // The challenge's answer is refused as expired, and captures nothing.
    await expect(t.checkout.completeAuthentication({ checkoutId, attemptId: first.challenge!.attemptId, code: '123456' }, { headers: { 'checkout-token': token } })).rejects.toMatchObject({
      code: Code.FailedPrecondition,
      rawMessage: 'This checkout has expired.',
    });
    expect((await t.eventsOf(id)).map((e) => e.type)).toEqual(['order.created', 'order.expired']);
  });

  it('frees a single-use link that the order\'s open challenge held: another order of the link can pay', async () => {
    const link = await svc.app.inject({
      method: 'POST',
      url: '/v1/links',
      headers: { ...auth(shop.test_secret_key), 'content-type': 'application/json' },
      payload: JSON.stringify({ amount: 2500, currency: 'EUR', reference: 'single-expire', type: 'single_use' }),
    });
    expect(link.statusCode, link.body).toBe(201);
    // A customer's first Pay on the link's page starts their order (PaymentLinkPageService.StartPayment).
    const open = async () => {
      const started = await svc.app.inject({
        method: 'POST',
        url: '/checkout.v1.PaymentLinkPageService/StartPayment',
        headers: { 'content-type': 'application/json' },
        payload: { suffix: new URL(link.json().url as string).pathname.slice('/l/'.length), startId: crypto.randomUUID() },
      });
      expect(started.statusCode, started.body).toBe(200);
      return `ord_${started.json().checkoutId as string}`;
    };
    const a = await open();
    const b = await open();
    expect(a).not.toBe(b);
    const held = await payWithTestCard(svc.core.routes, shop, a, { behaviour: 'challenge' });
    expect(held.outcome?.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    const blocked = await payWithTestCard(svc.core.routes, shop, b).catch((e: unknown) => ConnectError.from(e));
    expect((blocked as ConnectError).findDetails(ErrorDetailSchema)[0]?.code).toBe('payment_link_used');

    expect((await expire(a)).statusCode).toBe(200);
    const paid = await payWithTestCard(svc.core.routes, shop, b, { submissionId: 'after-expire' });
    expect(paid.outcome?.status).toBe(PaymentStatus.SUCCEEDED);
  });
});

describe('an expired order\'s checkout', () => {
  it('shows the expired page and refuses payments', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    expect((await expire(id)).statusCode).toBe(200);

    const page = await svc.app.inject({ method: 'GET', url: `/c/${checkoutId}`, headers: { 'accept-language': 'en' } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>This checkout has expired</h1>');
    await expect(t.checkout.submitCardPayment({ checkoutId, submissionId: 'late', card: t.card('approved') }, { headers: { 'checkout-token': token } })).rejects.toMatchObject({
      code: Code.FailedPrecondition,
      rawMessage: 'This checkout has expired.',
    });
    const transfer = await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers: auth(shop.test_secret_key) });
    expect(transfer.json().error.code).toBe('order_expired');
    expect(await t.attemptsOf(id)).toEqual([]);
    expect((await t.eventsOf(id)).map((e) => e.type)).toEqual(['order.created', 'order.expired']);
  });
});

describe('OrderService.ExpireOrder over Connect', () => {
  it('expires the order, and refuses a paid one with ABORTED', async () => {
    const orders = createClient(OrderService, createRouterTransport(svc.core.routes));
    const options = { headers: auth(shop.test_secret_key) };
    const id = await newOrder();
    expect((await orders.expireOrder({ id }, options)).order?.status).toBe(OrderStatus.EXPIRED);
    const paid = await newOrder();
    expect((await payWithTestCard(svc.core.routes, shop, paid)).outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    const refused = await orders.expireOrder({ id: paid }, options).catch((e: unknown) => ConnectError.from(e));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.Aborted);
    expect((refused as ConnectError).findDetails(ErrorDetailSchema)[0]?.code).toBe('order_not_open');
  });
});

describe('a payment racing the expiry', () => {
  it('ends paid (the expiry refused) or expired (the payment refused), never both, and the ledger balances', async () => {
    const outcomes = { paid: 0, expired: 0 };
    for (let round = 0; round < 20; round++) {
      const id = await newOrder(shop.test_secret_key, { reference: `race-${round}` });
      const [payment, expiry] = await Promise.allSettled([payWithTestCard(svc.core.routes, shop, id, { submissionId: `race-${round}` }), expire(id)]);
      const order = await svc.db.knex('orders').where({ id }).first();
      const types = (await t.eventsOf(id)).map((e) => e.type);
      const expiryStatus = expiry.status === 'fulfilled' ? expiry.value.statusCode : 0;
      if (order.status === 'paid') {
        outcomes.paid += 1;
        expect(payment.status === 'fulfilled' && payment.value.outcome?.status).toBe(PaymentStatus.SUCCEEDED);
        expect(expiryStatus).toBe(409);
        expect(['order_not_open', 'payment_in_progress']).toContain(expiry.status === 'fulfilled' && expiry.value.json().error.code);
        expect(types).toEqual(['order.created', 'order.paid']);
      } else {
        outcomes.expired += 1;
        expect(order.status).toBe('expired');
        expect(expiryStatus).toBe(200);
        // Refused before it started: nothing was authorized, nothing reversed.
        expect(payment.status).toBe('rejected');
        expect(payment.status === 'rejected' && ConnectError.from(payment.reason).rawMessage).toBe('This checkout has expired.');
        expect(types).toEqual(['order.created', 'order.expired']);
      }
    }
    expect(outcomes.paid + outcomes.expired).toBe(20);
    expect(await svc.core.ledger.verify()).toBeUndefined();
  }, 120_000);
});
