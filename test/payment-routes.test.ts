// Routes as data (issue 21.5), on the real Postgres: a merchant's ordered routes per mode in
// payment_routes decide where its payments go and where a soft decline fails over; a merchant with
// none takes its mode's default (test: simulated_alpha then simulated_beta; live: none).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { CheckoutService, PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { PostgresPaymentRouteRepository } from '../src/modules/payment/adapters/postgres/postgres-payment-route-repository.ts';
import type { PaymentRoute } from '../src/modules/payment/domain/routing.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';
import { pageToken } from './support/payments.ts';

let svc: TestService;
let checkout: ReturnType<typeof createClient<typeof CheckoutService>>;

beforeAll(async () => {
  svc = await startTestService();
  checkout = createClient(CheckoutService, createRouterTransport(svc.core.routes));
});
afterAll(async () => {
  await svc?.close();
});

const route = (processor: string, processorAccountId: string | null = null): PaymentRoute => ({ processor, processorAccountId });

/** A sandbox whose routes in a mode are `routes` (set before its first payment: the registry keeps them for 30 s). */
async function shopRouting(name: string, routes: readonly PaymentRoute[], livemode = false): Promise<SandboxCredentials> {
  const shop = await svc.sandbox(name);
  await new PostgresPaymentRouteRepository(svc.db.knex).replace(shop.merchant_id, livemode, routes);
  return shop;
}

function card(shop: SandboxCredentials, behaviour: string) {
  const found = shop.test_cards.find((c) => c.behaviour === behaviour)!;
  return { number: found.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada Lovelace' };
}

/** A Luhn-valid Visa number no sandbox issued. */
function realCard() {
  const body = '4000' + String(Date.now()).slice(-11);
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return { number: body + String((10 - (sum % 10)) % 10), expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada Lovelace' };
}

async function payOrder(key: string, cardDetails: ReturnType<typeof card>) {
  const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: orderBody() });
  expect(res.statusCode).toBe(201);
  const orderId: string = res.json().id;
  const checkoutId = orderId.slice(4);
  const token = await pageToken(svc.core.routes, checkoutId);
  const { outcome } = await checkout.submitCardPayment({ checkoutId, submissionId: crypto.randomUUID(), card: cardDetails }, { headers: { 'checkout-token': token } });
  const attempts = await svc.db.knex('payment_attempts').where({ order_id: orderId }).orderBy('created_at');
  return { orderId, outcome: outcome!, attempts: attempts.map((a) => [a.route, a.status, a.decline_code, a.retry]) };
}

describe('payment_routes', () => {
  it('keeps a merchant’s routes in order per mode, and replacing them by none returns it to the default', async () => {
    const shop = await svc.sandbox('Routes kept');
    const repo = new PostgresPaymentRouteRepository(svc.db.knex);
    expect(await repo.list(shop.merchant_id, false)).toEqual([]);
    await repo.replace(shop.merchant_id, false, [route('simulated_beta'), route('simulated_alpha', 'acct_1')]);
    await repo.replace(shop.merchant_id, true, [route('simulated_alpha')]);
    expect(await repo.list(shop.merchant_id, false)).toEqual([route('simulated_beta'), route('simulated_alpha', 'acct_1')]);
    expect(await repo.list(shop.merchant_id, true)).toEqual([route('simulated_alpha')]);
    await repo.replace(shop.merchant_id, false, [route('simulated_alpha')]);
    expect(await repo.list(shop.merchant_id, false)).toEqual([route('simulated_alpha')]);
    await repo.replace(shop.merchant_id, false, []);
    expect(await repo.list(shop.merchant_id, false)).toEqual([]);
    expect(await repo.list(shop.merchant_id, true)).toEqual([route('simulated_alpha')]);
  });

  it('refuses a processor name that is not a name', async () => {
    const shop = await svc.sandbox('Routes refused');
    await expect(new PostgresPaymentRouteRepository(svc.db.knex).replace(shop.merchant_id, false, [route('Simulated Alpha!')])).rejects.toThrow();
  });
});

describe('routing a payment', () => {
  it('without routes of its own, a merchant takes the default: a soft decline on simulated_alpha fails over to simulated_beta', async () => {
    const shop = await svc.sandbox('Default routes');
    const paid = await payOrder(shop.test_secret_key, card(shop, 'soft_decline'));
    expect(paid.outcome.status).toBe(PaymentStatus.SUCCEEDED);
    expect(paid.attempts).toEqual([
      ['simulated_alpha', 'failed', 'insufficient_funds', false],
      ['simulated_beta', 'succeeded', null, true],
    ]);
  });

  it('authorizes on the merchant’s first route, and records it on the attempt', async () => {
    const shop = await shopRouting('Beta first', [route('simulated_beta'), route('simulated_alpha')]);
    const paid = await payOrder(shop.test_secret_key, card(shop, 'approved'));
    expect(paid.outcome.status).toBe(PaymentStatus.SUCCEEDED);
    expect(paid.attempts).toEqual([['simulated_beta', 'succeeded', null, false]]);
  });

  it('with one route, a soft decline has nowhere to fail over to: the order fails', async () => {
    const shop = await shopRouting('Alpha only', [route('simulated_alpha')]);
    const failed = await payOrder(shop.test_secret_key, card(shop, 'soft_decline'));
    expect(failed.outcome).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'insufficient_funds' });
    expect(failed.attempts).toEqual([['simulated_alpha', 'failed', 'insufficient_funds', false]]);
    const events = await svc.db.knex('events').where({ order_id: failed.orderId }).orderBy('sequence');
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.failed']);
    expect(events[1].data).toMatchObject({ reason: { decline_code: 'insufficient_funds', route: 'simulated_alpha', retried: false } });
  });

  it('never fails over on a hard decline', async () => {
    const shop = await shopRouting('Hard decline', [route('simulated_alpha'), route('simulated_beta')]);
    const failed = await payOrder(shop.test_secret_key, card(shop, 'hard_decline'));
    expect(failed.outcome).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'expired_card' });
    expect(failed.attempts).toEqual([['simulated_alpha', 'failed', 'expired_card', false]]);
  });

  it('skips a route naming a processor it does not know; with none left the payment is unavailable', async () => {
    const skipping = await shopRouting('Unknown first', [route('no_such_processor'), route('simulated_beta')]);
    expect((await payOrder(skipping.test_secret_key, card(skipping, 'approved'))).attempts).toEqual([['simulated_beta', 'succeeded', null, false]]);
    const none = await shopRouting('Unknown only', [route('no_such_processor')]);
    const unavailable = await payOrder(none.test_secret_key, card(none, 'approved'));
    expect(unavailable.outcome).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'processing_unavailable' });
    expect(unavailable.attempts).toEqual([['none', 'failed', 'processing_unavailable', false]]);
  });

  it('live mode routes to no simulated acquirer, even one its rows name: processing_unavailable as before', async () => {
    const shop = await shopRouting('Live routes', [route('simulated_alpha')], true);
    const unavailable = await payOrder(shop.live_secret_key, realCard());
    expect(unavailable.outcome).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'processing_unavailable' });
    expect(unavailable.attempts).toEqual([['none', 'failed', 'processing_unavailable', false]]);
    const byDefault = await svc.sandbox('Live default');
    expect((await payOrder(byDefault.live_secret_key, realCard())).outcome).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'processing_unavailable' });
  });
});
