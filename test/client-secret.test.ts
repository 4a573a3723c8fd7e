// Client secrets: the merchant's server creates the order (secret key) and hands its client_secret to an
// app, which pays that one order through CheckoutService with the publishable key; it can do nothing else.
// Real Postgres, the in-process core over createRouterTransport(core.routes); REST through app.inject().
import { Code, ConnectError, createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { CheckoutService, PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { RefundService } from '../src/gen/checkout/v1/refund_pb.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';
import { payWithTestCard, tokenInPage } from './support/payments.ts';

let svc: TestService;
let shop: SandboxCredentials;
let otherShop: SandboxCredentials;
let checkout: Client<typeof CheckoutService>;
let offsetMs = 0;

beforeAll(async () => {
  svc = await startTestService({ clock: { now: () => new Date(Date.now() + offsetMs) } });
  shop = await svc.sandbox('Client secret shop');
  otherShop = await svc.sandbox('Other shop');
  checkout = createClient(CheckoutService, createRouterTransport(svc.core.routes));
});
afterAll(async () => {
  await svc?.close();
});

const json = { 'content-type': 'application/json' };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Creates an order with the shop's secret key over REST; answers the 201 body. */
async function createOrder(overrides: Record<string, unknown> = {}): Promise<{ id: string; client_secret: string } & Record<string, unknown>> {
  const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...bearer(shop.test_secret_key), ...json }, payload: JSON.stringify(orderBody(overrides)) });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** An app's headers: the publishable key and the client secret. */
const app = (secret: string, key = shop.test_publishable_key) => ({ headers: { ...bearer(key), 'checkout-client-secret': secret } });

/** A card payment an app submits for an order, with the sandbox's approved card. */
function payAsApp(orderId: string, secret: string, key?: string, submissionId = `app-${orderId}`) {
  const card = shop.test_cards.find((c) => c.behaviour === 'approved')!;
  return checkout.submitCardPayment(
    { checkoutId: orderId.slice(4), submissionId, card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' } },
    app(secret, key),
  );
}

async function codeOf(call: Promise<unknown>): Promise<Code> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err).code;
  }
  throw new Error('expected the call to be refused');
}

describe('the order answers its client secret', () => {
  it('on create only: not on retrieve, in a list, in an event, nor stored in clear', async () => {
    const order = await createOrder({ reference: 'cs-shape' });
    expect(order.client_secret).toMatch(new RegExp(`^${order.id}_secret_[0-9A-Za-z_-]{30,}$`));

    const retrieved = await svc.app.inject({ method: 'GET', url: `/v1/orders/${order.id}`, headers: bearer(shop.test_secret_key) });
    expect(retrieved.statusCode).toBe(200);
    expect(retrieved.json()).not.toHaveProperty('client_secret');

    const list = await svc.app.inject({ method: 'GET', url: '/v1/orders?limit=100', headers: bearer(shop.test_secret_key) });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain('_secret_');
    expect(list.body).not.toContain('client_secret');

    const events = await svc.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: bearer(shop.test_secret_key) });
    expect(events.body).not.toContain(order.client_secret);
    expect(events.body).not.toContain('client_secret');

    const row = await svc.db.knex('orders').where({ id: order.id }).first();
    expect(row.client_secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(order.client_secret);
    // Valid as long as the order (the 24 h default), never longer.
    expect(new Date(row.client_secret_expires_at).getTime()).toBe(new Date(row.expires_at).getTime());
  });

  it('never to a publishable key, which cannot create, retrieve or list orders, nor refund', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...bearer(shop.test_publishable_key), ...json }, payload: JSON.stringify(orderBody()) });
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain('_secret_');

    const order = await createOrder({ reference: 'cs-pk-services' });
    const transport = createRouterTransport(svc.core.routes);
    const orders = createClient(OrderService, transport);
    const refunds = createClient(RefundService, transport);
    const asApp = app(order.client_secret);
    expect(await codeOf(orders.getOrder({ id: order.id }, asApp))).toBe(Code.PermissionDenied);
    expect(await codeOf(orders.listOrders({}, asApp))).toBe(Code.PermissionDenied);
    expect(await codeOf(refunds.createRefund({ orderId: order.id }, asApp))).toBe(Code.PermissionDenied);
  });
});

describe('an app pays with the publishable key and the client secret', () => {
  it('reads its checkout and pays it with the approved card', async () => {
    const order = await createOrder({ reference: 'cs-pay' });
    const view = await checkout.getCheckout({ checkoutId: order.id.slice(4) }, app(order.client_secret));
    expect(view.checkout!.order).toMatchObject({ id: order.id, amount: 2500n });
    // The page's token lives as long as the order; the app's secret expires, so the app never gets the token.
    expect(view.checkout!.checkoutToken).toBe('');

    const paid = await payAsApp(order.id, order.client_secret);
    expect(paid.outcome!.status).toBe(PaymentStatus.SUCCEEDED);
    const retrieved = await svc.app.inject({ method: 'GET', url: `/v1/orders/${order.id}`, headers: bearer(shop.test_secret_key) });
    expect(retrieved.json()).toMatchObject({ status: 'paid' });
  });

  it('answers a 3-D Secure challenge with the same credentials', async () => {
    const order = await createOrder({ reference: 'cs-3ds' });
    const card = shop.test_cards.find((c) => c.behaviour === 'challenge')!;
    const first = await checkout.submitCardPayment(
      { checkoutId: order.id.slice(4), submissionId: 'app-3ds', card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' } },
      app(order.client_secret),
    );
    expect(first.outcome!.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    const answer = { checkoutId: order.id.slice(4), attemptId: first.outcome!.challenge!.attemptId, code: '123456' };
    expect(await codeOf(checkout.completeAuthentication(answer, app(`${order.id}_secret_nope`)))).toBe(Code.Unauthenticated);
    expect((await checkout.completeAuthentication(answer, app(order.client_secret))).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
  });

  it('is refused (unauthenticated) with a wrong secret, the secret of another order, or none', async () => {
    const order = await createOrder({ reference: 'cs-wrong' });
    const other = await createOrder({ reference: 'cs-other' });
    expect(await codeOf(payAsApp(order.id, `${order.id}_secret_wrong`))).toBe(Code.Unauthenticated);
    expect(await codeOf(payAsApp(order.id, other.client_secret))).toBe(Code.Unauthenticated);
    expect(await codeOf(payAsApp(order.id, ''))).toBe(Code.Unauthenticated);
    expect(await codeOf(checkout.getCheckout({ checkoutId: order.id.slice(4) }, app(other.client_secret)))).toBe(Code.Unauthenticated);
    const noSecret = { headers: bearer(shop.test_publishable_key) };
    expect(await codeOf(checkout.getCheckout({ checkoutId: order.id.slice(4) }, noSecret))).toBe(Code.Unauthenticated);
    // Nothing was charged: the order is still open, and pays with its own secret.
    expect((await payAsApp(order.id, order.client_secret)).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
  });

  it('is refused with the publishable key of another merchant, or of the other mode', async () => {
    const order = await createOrder({ reference: 'cs-keys' });
    expect(await codeOf(payAsApp(order.id, order.client_secret, otherShop.test_publishable_key))).toBe(Code.Unauthenticated);
    expect(await codeOf(payAsApp(order.id, order.client_secret, shop.live_publishable_key))).toBe(Code.Unauthenticated);
    expect(await codeOf(checkout.getCheckout({ checkoutId: order.id.slice(4) }, app(order.client_secret, otherShop.test_publishable_key)))).toBe(Code.Unauthenticated);
    expect(await codeOf(payAsApp(order.id, order.client_secret, 'pk_test_unknownunknownunknown'))).toBe(Code.Unauthenticated);
  });

  it('answers 401 on REST-style Connect JSON too', async () => {
    const order = await createOrder({ reference: 'cs-http' });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/checkout.v1.CheckoutService/GetCheckout',
      headers: { ...json, 'connect-protocol-version': '1', ...bearer(shop.test_publishable_key), 'checkout-client-secret': `${order.id}_secret_nope` },
      payload: JSON.stringify({ checkoutId: order.id.slice(4) }),
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it('is refused once the secret expired, at most 24 hours after creation, while the page still pays', async () => {
    // An order open for 48 hours: its secret stops after 24, the page's token does not.
    const order = await createOrder({ reference: 'cs-expired', expires_at: new Date(Date.now() + 48 * 3600_000).toISOString() });
    const row = await svc.db.knex('orders').where({ id: order.id }).first();
    expect(new Date(row.client_secret_expires_at).getTime()).toBe(new Date(row.created_at).getTime() + 24 * 3600_000);
    offsetMs = 25 * 3600_000;
    try {
      expect(await codeOf(checkout.getCheckout({ checkoutId: order.id.slice(4) }, app(order.client_secret)))).toBe(Code.Unauthenticated);
      expect(await codeOf(payAsApp(order.id, order.client_secret))).toBe(Code.Unauthenticated);
      expect((await payWithTestCard(svc.core.routes, shop, order.id)).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
    } finally {
      offsetMs = 0;
    }
  });

  it('is refused when the order itself expired sooner', async () => {
    const order = await createOrder({ reference: 'cs-short', expires_at: new Date(Date.now() + 10 * 60_000).toISOString() });
    offsetMs = 11 * 60_000;
    try {
      expect(await codeOf(payAsApp(order.id, order.client_secret))).toBe(Code.Unauthenticated);
    } finally {
      offsetMs = 0;
    }
  });
});

describe('no credential outlives the client secret', () => {
  const card = (behaviour: string) => {
    const found = shop.test_cards.find((c) => c.behaviour === behaviour)!;
    return { number: found.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' };
  };
  /** An anonymous call to the public Connect mount, as anyone holding the secret (and so the checkout id) can send it. */
  const anonymous = (method: string, body: unknown, headers: Record<string, string> = {}) =>
    svc.app.inject({ method: 'POST', url: `/checkout.v1.CheckoutService/${method}`, headers: { ...json, 'connect-protocol-version': '1', ...headers }, payload: JSON.stringify(body) });

  it('an expired secret: the checkout id it contains gets no token from GetCheckout, and nothing pays the order', async () => {
    const order = await createOrder({ reference: 'cs-bypass', expires_at: new Date(Date.now() + 48 * 3600_000).toISOString() });
    const checkoutId = order.client_secret.slice('ord_'.length, order.client_secret.indexOf('_secret_'));
    expect(checkoutId).toBe(order.id.slice(4));
    offsetMs = 25 * 3600_000;
    try {
      expect(await codeOf(checkout.getCheckout({ checkoutId }, app(order.client_secret)))).toBe(Code.Unauthenticated);
      const view = await anonymous('GetCheckout', { checkoutId });
      expect(view.statusCode).toBe(200);
      const token = (view.json().checkout.checkoutToken as string | undefined) ?? '';
      const paid = await anonymous('SubmitCardPayment', { checkoutId, submissionId: 'bypass', card: card('approved') }, { 'checkout-token': token });
      expect(paid.statusCode).toBe(403);
      expect(paid.json().details[0].debug.code).toBe('checkout_token_invalid');
      expect(token).toBe('');
    } finally {
      offsetMs = 0;
    }
    expect((await svc.db.knex('orders').where({ id: order.id }).first()).status).toBe('pending');
    expect(await svc.db.knex('payment_attempts').where({ order_id: order.id })).toEqual([]);
  });

  it('an app\'s payment answers no token either, so a secret used while valid leaves nothing that pays after it expired', async () => {
    const order = await createOrder({ reference: 'cs-answer', expires_at: new Date(Date.now() + 48 * 3600_000).toISOString() });
    const checkoutId = order.id.slice(4);
    const declined = await checkout.submitCardPayment({ checkoutId, submissionId: 'app-declined', card: card('hard_decline') }, app(order.client_secret));
    expect(declined.outcome!.status).toBe(PaymentStatus.FAILED);
    const challenged = await checkout.submitCardPayment({ checkoutId, submissionId: 'app-challenge', card: card('challenge') }, app(order.client_secret));
    expect(challenged.outcome!.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    const abandoned = await checkout.completeAuthentication({ checkoutId, attemptId: challenged.outcome!.challenge!.attemptId, abandon: true }, app(order.client_secret));
    const answered = [declined, challenged, abandoned].map((r) => r.outcome!.checkout!.checkoutToken);
    offsetMs = 25 * 3600_000;
    try {
      for (const [i, token] of answered.entries()) {
        const paid = await anonymous('SubmitCardPayment', { checkoutId, submissionId: `after-expiry-${i}`, card: card('approved') }, { 'checkout-token': token });
        expect(paid.statusCode).toBe(403);
      }
    } finally {
      offsetMs = 0;
    }
    expect(answered).toEqual(['', '', '']);
    expect((await svc.db.knex('orders').where({ id: order.id }).first()).status).toBe('failed');
  });
});

describe('the hosted page', () => {
  it('keeps paying with its checkout token, and is refused without it', async () => {
    const order = await createOrder({ reference: 'cs-page' });
    const card = shop.test_cards.find((c) => c.behaviour === 'approved')!;
    const submit = { checkoutId: order.id.slice(4), submissionId: 'page-no-token', card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' } };
    expect(await codeOf(checkout.submitCardPayment(submit))).toBe(Code.PermissionDenied);
    expect(await codeOf(checkout.submitCardPayment(submit, { headers: { 'checkout-token': 'wrong' } }))).toBe(Code.PermissionDenied);
    expect((await payWithTestCard(svc.core.routes, shop, order.id)).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
  });

  it('learns its token from its own render only: the page\'s HTML carries it, GetCheckout over the network never does', async () => {
    const order = await createOrder({ reference: 'cs-page-token' });
    const checkoutId = order.id.slice(4);
    const row = await svc.db.knex('orders').where({ id: order.id }).first();
    const page = await svc.app.inject({ method: 'GET', url: `/c/${checkoutId}` });
    expect(tokenInPage(page.body)).toBe(row.checkout_token);
    const overNetwork = await svc.app.inject({ method: 'POST', url: '/checkout.v1.CheckoutService/GetCheckout', headers: { ...json, 'connect-protocol-version': '1' }, payload: JSON.stringify({ checkoutId }) });
    expect(overNetwork.statusCode).toBe(200);
    expect(overNetwork.json().checkout.order.id).toBe(order.id);
    expect(overNetwork.json().checkout.checkoutToken ?? '').toBe('');
  });
});
