// One sandbox merchant on a test service, with the builders the payment suites share (payments, payment-races,
// expire-order, …): its test cards, an order as the merchant creates it with the page's token, the checkout client
// the page uses, and what an order left in the database. A suite passes the values it asserts on, so they stay
// visible in the test.
import { createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import type { LightMyRequestResponse } from 'fastify';
import type { Knex } from 'knex';
import { expect } from 'vitest';
import { CheckoutService } from '../../src/gen/checkout/v1/checkout_pb.ts';
import type { SandboxCredentials } from '../../src/modules/merchant/application/create-sandbox.ts';
import { orderBody } from './order-fixtures.ts';
import { pageToken } from './payments.ts';
import { startTestService, type TestService } from './service.ts';

/** A card as CheckoutService.SubmitCardPayment takes it. */
export interface TestCardDetails {
  number: string;
  expMonth: number;
  expYear: number;
  cvc: string;
  name: string;
}

/** An order as POST /v1/orders answered it, with what its hosted page needs. */
export interface TestOrder {
  /** The REST order (JSON). */
  readonly order: { readonly id: string; readonly reference: string; readonly [field: string]: unknown };
  readonly id: string;
  readonly checkoutId: string;
  /** The checkout token of its hosted page. */
  readonly token: string;
}

/** A row as a query of a table answers it (untyped, as every suite reads rows). */
type Row = Awaited<ReturnType<Knex>>;

/** A test service with one sandbox merchant, and the builders of its orders and payments. */
export interface TestShop {
  readonly svc: TestService;
  readonly shop: SandboxCredentials;
  /** CheckoutService as the hosted page calls it (over the service's Connect routes). */
  readonly checkout: Client<typeof CheckoutService>;
  /** The sandbox's test card of `behaviour` (sandbox: another merchant's), valid for two more years. */
  card(behaviour: string, sandbox?: SandboxCredentials): TestCardDetails;
  /** Creates an order with `key` (the shop's test secret key by default) and the body's overrides; 201 expected. */
  createOrder(key?: string, overrides?: Record<string, unknown>): Promise<TestOrder>;
  /** POST /v1/test_helpers/orders/<id>/simulate_transfer with `key` (the shop's test secret key by default). */
  simulateTransfer(orderId: string, key?: string): Promise<LightMyRequestResponse>;
  /** The order's events (rows), in sequence. */
  eventsOf(orderId: string): Promise<Row[]>;
  /** The types of the order's events, in sequence. */
  eventTypes(orderId: string): Promise<string[]>;
  /** The order's payment attempts (rows), oldest first. */
  attemptsOf(orderId: string): Promise<Row[]>;
}

/** Starts a test service ({@link startTestService}) and creates the sandbox merchant `name` on it. */
export async function startTestShop(name: string): Promise<TestShop> {
  const svc = await startTestService();
  let shop: SandboxCredentials;
  try {
    shop = await svc.sandbox(name);
  } catch (err) {
    await svc.close();
    throw err;
  }
  const checkout = createClient(CheckoutService, createRouterTransport(svc.core.routes));
  const eventsOf = (orderId: string) => svc.db.knex('events').where({ order_id: orderId }).orderBy('sequence');
  return {
    svc,
    shop,
    checkout,
    card(behaviour, sandbox = shop) {
      const found = sandbox.test_cards.find((c) => c.behaviour === behaviour);
      if (!found) throw new Error(`no ${behaviour} card`);
      return { number: found.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: found.brand === 'amex' ? '1234' : '123', name: 'Ada Lovelace' };
    },
    async createOrder(key = shop.test_secret_key, overrides = {}) {
      const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: orderBody(overrides) });
      expect(res.statusCode, res.body).toBe(201);
      const order = res.json();
      const checkoutId = (order.id as string).slice(4);
      return { order, id: order.id, checkoutId, token: await pageToken(svc.core.routes, checkoutId) };
    },
    simulateTransfer: (orderId, key = shop.test_secret_key) =>
      svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${orderId}/simulate_transfer`, headers: { authorization: `Bearer ${key}` } }),
    eventsOf,
    eventTypes: async (orderId) => (await eventsOf(orderId)).map((e) => e.type as string),
    attemptsOf: (orderId) => svc.db.knex('payment_attempts').where({ order_id: orderId }).orderBy('created_at'),
  };
}
