// The Vendure payment plugin (sdk/vendure) against the real service: a Vendure server booted with
// @vendure/testing on this machine's Postgres (a database of its own), the service started in this
// process on its own database and stream, the plugin's webhook route registered as the endpoint.
// A shop order is paid on our side over Connect, settled by our signed order.paid, refunded in part
// from the admin API; references match end to end. Bad signatures change nothing; cancelling an
// unpaid payment expires ours, so that a late payment is refused.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions.js';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { mergeConfig, LanguageCode, DefaultLogger, LogLevel, Order, PaymentMethod, RequestContextService, TransactionalConnection } from '@vendure/core';
import { createTestEnvironment, E2E_DEFAULT_CHANNEL_TOKEN, registerInitializer, testConfig, type TestDbInitializer, type SimpleGraphQLClient, type TestServer } from '@vendure/testing';
import { CheckoutService, PaymentStatus } from '../sdk/gen/checkout/v1/checkout_pb.ts';
import { OrderService, OrderStatus, type Order as CheckoutOrder } from '../sdk/gen/checkout/v1/order_pb.ts';
import { generateTestHeader } from '../sdk/webhooks/test-header.ts';
import { CheckoutPaymentPlugin, CHECKOUT_HANDLER_CODE, checkoutPaymentHandler } from '../sdk/vendure/index.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { TEST_POSTGRES_URL } from './support/database.ts';
import { api, createEndpoint, startHarness, type Harness } from './support/webhooks.ts';
import { waitFor } from './support/wait.ts';

// Vendure 3.6+ posts usage data to telemetry.vendure.io after booting; this suite's traffic stays on loopback.
process.env.VENDURE_DISABLE_TELEMETRY = 'true';

const PAYMENT_METHOD_CODE = 'hosted-checkout';
const postgres = new URL(TEST_POSTGRES_URL);
// The host of an embedded Postgres is its socket's directory, percent-encoded in the URL.
const DB = { host: decodeURIComponent(postgres.hostname), port: Number(postgres.port || 5432), username: decodeURIComponent(postgres.username || 'postgres'), password: decodeURIComponent(postgres.password) };

/** The merchant the shop pays: its keys and the sandbox's approved test card. */
type Shop = Pick<SandboxCredentials, 'test_secret_key' | 'test_publishable_key'> & { approvedCard: string };

/**
 * The service: by default started here (the harness: own database and stream); with CHECKOUT_API_URL set,
 * a copy already running (`npm start` with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true), paid with the sandbox
 * of CHECKOUT_SECRET_KEY, CHECKOUT_PUBLISHABLE_KEY and CHECKOUT_APPROVED_CARD (see sdk/vendure/README.md).
 */
async function startCheckout(): Promise<{ base: string; shop: Shop; close(): Promise<void> }> {
  const external = process.env.CHECKOUT_API_URL;
  if (external) {
    const need = (name: string): string => {
      const value = process.env[name];
      if (!value) throw new Error(`CHECKOUT_API_URL is set: set ${name} too (see sdk/vendure/README.md).`);
      return value;
    };
    const shop = { test_secret_key: need('CHECKOUT_SECRET_KEY'), test_publishable_key: need('CHECKOUT_PUBLISHABLE_KEY'), approvedCard: need('CHECKOUT_APPROVED_CARD') };
    return { base: external.replace(/\/+$/, ''), shop, close: async () => {} };
  }
  const harness: Harness = await startHarness();
  // The Vendure test channel prices in USD: a merchant settling in USD keeps the amounts one to one.
  const sandbox = await harness.service.core.createSandbox({ name: 'Vendure shop', settlementCurrency: 'USD' });
  const approvedCard = sandbox.test_cards.find((c) => c.behaviour === 'approved')!.number;
  return { base: harness.base, shop: { ...sandbox, approvedCard }, close: () => harness.close() };
}

let service: Awaited<ReturnType<typeof startCheckout>>;
let shop: Shop;
let webhookSecret: string;
let endpointId: string;
let server: TestServer;
let admin: SimpleGraphQLClient;
let shopClient: SimpleGraphQLClient;
let vendureDb: OwnPostgresDatabase | undefined;
let orders: Client<typeof OrderService>;
let checkout: Client<typeof CheckoutService>;
let webhookUrl: string;

/**
 * Vendure's database on the test Postgres, with a name of its own per run (@vendure/testing's
 * PostgresInitializer names it after the file, which two runs at once would share); synchronised by TypeORM.
 */
class OwnPostgresDatabase implements TestDbInitializer<PostgresConnectionOptions> {
  readonly name = `vendure_test_${randomBytes(6).toString('hex')}`;

  async init(_testFileName: string, options: PostgresConnectionOptions): Promise<PostgresConnectionOptions> {
    await onPostgres(`CREATE DATABASE "${this.name}"`);
    // TestServer reads the options it passed, not the answer: they are changed in place.
    Object.assign(options, { database: this.name, synchronize: true });
    return options;
  }

  async populate(populate: () => Promise<void>): Promise<void> {
    await populate();
  }

  destroy(): void {}

  drop(): Promise<void> {
    return onPostgres(`DROP DATABASE IF EXISTS "${this.name}" WITH (FORCE)`);
  }
}

async function onPostgres(sql: string): Promise<void> {
  const client = new pg.Client({ host: DB.host, port: DB.port, user: DB.username, password: DB.password, database: 'postgres' });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A free port on 127.0.0.1 for Vendure (its test config would take a fixed one). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  service = await startCheckout();
  shop = service.shop;
  const port = await freePort();
  webhookUrl = `http://127.0.0.1:${port}/checkout-webhooks`;
  const endpoint = await createEndpoint(service.base, shop.test_secret_key, webhookUrl, ['order.paid', 'order.refunded', 'order.voided']);
  webhookSecret = endpoint.secret;
  endpointId = endpoint.id;

  const database = new OwnPostgresDatabase();
  registerInitializer('postgres', database);
  const config = mergeConfig(testConfig, {
    apiOptions: { port, hostname: '127.0.0.1' },
    // Errors only: a failing webhook or refund says why in the test's output.
    logger: new DefaultLogger({ level: LogLevel.Error }),
    plugins: [CheckoutPaymentPlugin.init({ baseUrl: service.base, secretKey: shop.test_secret_key, webhookSecret })],
  });
  // Replaced whole: the test config's sql.js options mean nothing to Postgres. The initializer names the database.
  config.dbConnectionOptions = { type: 'postgres', ...DB, synchronize: true, logging: false };
  vendureDb = database;
  const env = createTestEnvironment(config);
  server = env.server;
  admin = env.adminClient;
  shopClient = env.shopClient;
  await server.init({
    productsCsvPath: fileURLToPath(new URL('./fixtures/vendure-products.csv', import.meta.url)),
    customerCount: 1,
    initialData: {
      defaultLanguage: LanguageCode.en,
      defaultZone: 'Europe',
      countries: [{ name: 'Germany', code: 'DE', zone: 'Europe' }],
      taxRates: [{ name: 'Standard Tax', percentage: 0 }],
      shippingMethods: [{ name: 'Standard Shipping', price: 500 }],
      paymentMethods: [{ name: PAYMENT_METHOD_CODE, handler: { code: CHECKOUT_HANDLER_CODE, arguments: [] } }],
      collections: [],
    },
  });
  await admin.asSuperAdmin();

  const transport = createConnectTransport({ baseUrl: service.base, httpVersion: '1.1' });
  orders = createClient(OrderService, transport);
  checkout = createClient(CheckoutService, transport);
}, 300_000);

afterAll(async () => {
  await server?.destroy();
  // A copy of the service that outlives the suite keeps no endpoint pointing at a port nobody listens on.
  if (endpointId) await api(service.base, shop.test_secret_key, 'DELETE', `/v1/webhook_endpoints/${endpointId}`);
  await service?.close();
  await vendureDb?.drop();
}, 120_000);

// ---------------------------------------------------------------- GraphQL

const ORDER_FIELDS = `id code state totalWithTax currencyCode
  payments { id state method amount transactionId metadata errorMessage refunds { id state total transactionId metadata } }`;

interface PaymentJson {
  id: string;
  state: string;
  method: string;
  amount: number;
  transactionId: string;
  metadata: Record<string, unknown> & { public?: { checkoutOrderId: string; checkoutUrl: string; clientSecret?: string } };
  errorMessage: string | null;
  refunds?: Array<{ id: string; state: string; total: number; transactionId: string; metadata: Record<string, unknown> }>;
}
interface OrderJson {
  id: string;
  code: string;
  state: string;
  totalWithTax: number;
  currencyCode: string;
  payments: PaymentJson[];
}

/** Runs a mutation whose result is a union with ErrorResult; fails the test on an error result. */
async function mutate<T>(client: SimpleGraphQLClient, field: string, query: string, variables?: Record<string, unknown>): Promise<T> {
  const res = await client.query<Record<string, T & { errorCode?: string; message?: string }>>(parse(query), variables);
  const result = res[field]!;
  if (result.errorCode) throw new Error(`${field} answered ${result.errorCode}: ${result.message}`);
  return result;
}

/** A guest puts two teapots in a cart, gives addresses and shipping, and moves to ArrangingPayment; answers the order's code. */
async function arrangePayment(guest: string): Promise<string> {
  await shopClient.asAnonymousUser();
  const onOrder = `... on Order { id code state } ... on ErrorResult { errorCode message }`;
  const { products } = await shopClient.query<{ products: { items: Array<{ variants: Array<{ id: string }> }> } }>(parse(`{ products { items { variants { id } } } }`));
  const variantId = products.items[0]!.variants[0]!.id;
  await mutate(shopClient, 'addItemToOrder', `mutation($id: ID!) { addItemToOrder(productVariantId: $id, quantity: 2) { ${onOrder} } }`, { id: variantId });
  await mutate(shopClient, 'setCustomerForOrder', `mutation($input: CreateCustomerInput!) { setCustomerForOrder(input: $input) { ${onOrder} } }`, {
    input: { emailAddress: `${guest}@shop.example`, firstName: 'Ada', lastName: guest },
  });
  await mutate(shopClient, 'setOrderShippingAddress', `mutation($input: CreateAddressInput!) { setOrderShippingAddress(input: $input) { ${onOrder} } }`, {
    input: { fullName: 'Ada Lovelace', streetLine1: 'Teestraße 1', city: 'Berlin', postalCode: '10115', countryCode: 'DE' },
  });
  const { eligibleShippingMethods } = await shopClient.query<{ eligibleShippingMethods: Array<{ id: string }> }>(parse(`{ eligibleShippingMethods { id } }`));
  await mutate(shopClient, 'setOrderShippingMethod', `mutation($id: [ID!]!) { setOrderShippingMethod(shippingMethodId: $id) { ${onOrder} } }`, { id: [eligibleShippingMethods[0]!.id] });
  const arranged = await mutate<{ code: string }>(
    shopClient,
    'transitionOrderToState',
    `mutation { transitionOrderToState(state: "ArrangingPayment") { ... on Order { id code state } ... on OrderStateTransitionError { errorCode message transitionError } } }`,
  );
  return arranged.code;
}

/** Pays the active order with our handler; answers the order after addPaymentToOrder. */
function addPayment(): Promise<OrderJson> {
  return mutate<OrderJson>(
    shopClient,
    'addPaymentToOrder',
    `mutation($input: PaymentInput!) { addPaymentToOrder(input: $input) { ... on Order { ${ORDER_FIELDS} } ... on ErrorResult { errorCode message } } }`,
    { input: { method: PAYMENT_METHOD_CODE, metadata: {} } },
  );
}

/** A guest places an order for two teapots and pays it with our handler. */
async function placeOrder(guest: string): Promise<OrderJson> {
  await arrangePayment(guest);
  return addPayment();
}

/** The order as the admin API shows it. */
async function adminOrder(id: string): Promise<OrderJson> {
  const res = await admin.query<{ order: OrderJson }>(parse(`query($id: ID!) { order(id: $id) { ${ORDER_FIELDS} } }`), { id });
  return res.order;
}

// ---------------------------------------------------------------- our side

const bearer = () => ({ headers: { authorization: `Bearer ${shop.test_secret_key}` } });

/** Our order, read over Connect with the secret key. */
async function ourOrder(id: string): Promise<CheckoutOrder> {
  return (await orders.getOrder({ id }, bearer())).order!;
}

/** The customer pays our order as the storefront's embedded fields would: publishable key, client secret, approved test card. */
async function payAsCustomer(orderId: string, clientSecret: string): Promise<PaymentStatus> {
  const res = await checkout.submitCardPayment(
    { checkoutId: orderId.slice(4), submissionId: `vendure-${orderId}`, card: { number: shop.approvedCard, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada Lovelace' } },
    { headers: { authorization: `Bearer ${shop.test_publishable_key}`, 'checkout-client-secret': clientSecret } },
  );
  return res.outcome!.status;
}

interface EventJson {
  id: string;
  type: string;
  order_id: string | null;
  reference: string | null;
  data: Record<string, unknown>;
}

/** Our events of one order, newest first. */
async function eventsOf(orderId: string): Promise<EventJson[]> {
  const res = await api<{ data: EventJson[] }>(service.base, shop.test_secret_key, 'GET', '/v1/events?limit=100');
  return res.json.data.filter((e) => e.order_id === orderId);
}

/** Posts a delivery to the plugin's route as the service would. */
function postWebhook(body: string, signature: string | undefined): Promise<Response> {
  return fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'checkout-signature': signature }) }, body });
}

// ---------------------------------------------------------------- tests

describe('a shop order paid through the hosted checkout', () => {
  it('creates our order with the Vendure code as reference, settles on order.paid, and refunds in part with matching references', async () => {
    const placed = await placeOrder('paid');
    expect(placed.state).toBe('PaymentAuthorized');
    const payment = placed.payments[0]!;
    expect(payment).toMatchObject({ state: 'Authorized', method: PAYMENT_METHOD_CODE, amount: placed.totalWithTax });
    expect(payment.transactionId).toMatch(/^ord_/);
    // The storefront's part: where to redirect, or the client secret for embedded fields.
    expect(payment.metadata.public).toMatchObject({ checkoutOrderId: payment.transactionId, checkoutUrl: expect.stringMatching(/\/c\/[A-Za-z0-9]+$/) });
    expect(payment.metadata.public!.clientSecret).toMatch(new RegExp(`^${payment.transactionId}_secret_`));

    const created = await ourOrder(payment.transactionId);
    expect(created).toMatchObject({ reference: placed.code, amount: BigInt(placed.totalWithTax), currency: placed.currencyCode, status: OrderStatus.PENDING });
    expect(placed.totalWithTax).toBe(2 * 1250 + 500);

    expect(await payAsCustomer(payment.transactionId, payment.metadata.public!.clientSecret!)).toBe(PaymentStatus.SUCCEEDED);
    const settled = await waitFor('the Vendure order to be PaymentSettled', () => adminOrder(placed.id), (o) => o.state === 'PaymentSettled', 60_000, 250);
    expect(settled.payments[0]).toMatchObject({ id: payment.id, state: 'Settled', transactionId: payment.transactionId });

    const paidEvent = (await eventsOf(payment.transactionId)).find((e) => e.type === 'order.paid')!;
    expect(paidEvent).toMatchObject({ reference: placed.code, data: { id: payment.transactionId, reference: placed.code, amount: placed.totalWithTax } });

    // The service redelivers order.paid: the plugin answers 2xx and settles nothing twice.
    const redeliver = await api(service.base, shop.test_secret_key, 'POST', `/v1/events/${paidEvent.id}/redeliver`, { endpoint_id: endpointId });
    expect(redeliver.status).toBe(200);
    const deliveries = await waitFor(
      'two answered deliveries of order.paid',
      async () => (await api<{ data: Array<{ status_code: number | null }> }>(service.base, shop.test_secret_key, 'GET', `/v1/events/${paidEvent.id}/deliveries`)).json.data,
      (d) => d.filter((a) => a.status_code === 200).length >= 2,
      60_000,
      250,
    );
    expect(deliveries.every((a) => a.status_code === 200)).toBe(true);
    const afterRedelivery = await adminOrder(placed.id);
    expect(afterRedelivery.state).toBe('PaymentSettled');
    expect(afterRedelivery.payments).toHaveLength(1);
    expect(afterRedelivery.payments[0]!.state).toBe('Settled');

    // A partial refund from the admin API reaches the service.
    const refund = await mutate<{ id: string; state: string; total: number; transactionId: string }>(
      admin,
      'refundOrder',
      `mutation($input: RefundOrderInput!) { refundOrder(input: $input) { ... on Refund { id state total transactionId metadata } ... on ErrorResult { errorCode message } } }`,
      // shipping and adjustment are deprecated, yet Vendure 3.7's Postgres schema still wants them not null.
      { input: { paymentId: payment.id, amount: 700, shipping: 0, adjustment: 0, lines: [], reason: 'One teapot arrived chipped' } },
    );
    expect(refund).toMatchObject({ state: 'Settled', total: 700 });
    expect(refund.transactionId).toMatch(/^re_/);
    const refunded = await ourOrder(payment.transactionId);
    expect(refunded).toMatchObject({ status: OrderStatus.PARTIALLY_REFUNDED, amountRefunded: 700n, reference: placed.code });
    expect(refunded.refunds).toHaveLength(1);
    expect(refunded.refunds[0]).toMatchObject({ id: refund.transactionId, amount: 700n, note: 'One teapot arrived chipped' });
    const refundedEvent = await waitFor('order.refunded', async () => (await eventsOf(payment.transactionId)).find((e) => e.type === 'order.refunded'), (e) => e !== undefined, 30_000, 250);
    expect(refundedEvent!.reference).toBe(placed.code);
    expect(refundedEvent!.data.reference).toBe(placed.code);
  }, 240_000);
});

describe('creating the payment', () => {
  it('is idempotent per Vendure order and attempt: a retried createPayment creates no second order of ours', async () => {
    const code = await arrangePayment('retry');
    const connection = server.app.get(TransactionalConnection).rawConnection;
    const ctx = await server.app.get(RequestContextService).create({ apiType: 'shop', channelOrToken: E2E_DEFAULT_CHANNEL_TOKEN });
    const order = await connection.getRepository(Order).findOneOrFail({ where: { code } });
    const method = await connection.getRepository(PaymentMethod).findOneOrFail({ where: { code: PAYMENT_METHOD_CODE } });
    // As when Vendure's transaction rolled back after our order was made: nothing was saved, the handler runs again.
    const first = await checkoutPaymentHandler.createPayment(ctx, order, order.totalWithTax, [], {}, method);
    const retry = await checkoutPaymentHandler.createPayment(ctx, order, order.totalWithTax, [], {}, method);
    expect(first.state).toBe('Authorized');
    expect(retry.transactionId).toBe(first.transactionId);
    expect(retry.metadata).toMatchObject({ idempotencyKey: `vendure:${code}:payment:1`, public: { checkoutUrl: expect.any(String) } });

    const placed = await addPayment();
    expect(placed.payments[0]!.transactionId).toBe(first.transactionId);
    const ours = await orders.listOrders({ reference: code, limit: 10 }, bearer());
    expect(ours.orders.map((o) => o.id)).toEqual([first.transactionId]);
  }, 120_000);
});

describe('the webhook route', () => {
  it('refuses a delivery with a bad or missing signature (400) and changes nothing', async () => {
    const placed = await placeOrder('forged');
    const payment = placed.payments[0]!;
    const body = JSON.stringify({
      id: 'evt_forgedforgedforged0001',
      type: 'order.paid',
      created: new Date().toISOString(),
      livemode: false,
      sequence: 9,
      data: { id: payment.transactionId, reference: placed.code, amount: placed.totalWithTax, currency: placed.currencyCode, method: 'card' },
    });
    const forged = await postWebhook(body, generateTestHeader({ payload: body, secret: 'whsec_notthesecretnotthesecret00' }));
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual({ error: 'signature_mismatch' });
    const unsigned = await postWebhook(body, undefined);
    expect(unsigned.status).toBe(400);
    // The right secret over other bytes: the signature covers the raw body.
    const tampered = await postWebhook(body.replace('"sequence":9', '"sequence":10'), generateTestHeader({ payload: body, secret: webhookSecret }));
    expect(tampered.status).toBe(400);

    const after = await adminOrder(placed.id);
    expect(after.state).toBe('PaymentAuthorized');
    expect(after.payments[0]!.state).toBe('Authorized');
    expect((await ourOrder(payment.transactionId)).status).toBe(OrderStatus.PENDING);
  }, 120_000);
});

describe('a late order.paid', () => {
  it('of an order refunded in full at the checkout service leaves the Vendure payment unsettled, and answers 2xx', async () => {
    const placed = await placeOrder('late');
    const payment = placed.payments[0]!;
    // The endpoint off while the customer pays and the merchant refunds in our dashboard: order.paid arrives later.
    expect((await api(service.base, shop.test_secret_key, 'PATCH', `/v1/webhook_endpoints/${endpointId}`, { disabled: true })).status).toBe(200);
    try {
      expect(await payAsCustomer(payment.transactionId, payment.metadata.public!.clientSecret!)).toBe(PaymentStatus.SUCCEEDED);
      const refund = await api(service.base, shop.test_secret_key, 'POST', `/v1/orders/${payment.transactionId}/refunds`, { amount: placed.totalWithTax, reason: 'requested_by_customer' });
      expect(refund.status).toBe(201);
      expect((await ourOrder(payment.transactionId)).status).toBe(OrderStatus.REFUNDED);
    } finally {
      await api(service.base, shop.test_secret_key, 'PATCH', `/v1/webhook_endpoints/${endpointId}`, { disabled: false });
    }
    const paidEvent = (await eventsOf(payment.transactionId)).find((e) => e.type === 'order.paid')!;
    const body = JSON.stringify({ id: paidEvent.id, type: 'order.paid', created: new Date().toISOString(), livemode: false, sequence: 2, data: paidEvent.data });
    const late = await postWebhook(body, generateTestHeader({ payload: body, secret: webhookSecret }));
    expect(late.status).toBe(200);
    expect(await late.json()).toMatchObject({ received: true, ignored: 'refunded' });
    const after = await adminOrder(placed.id);
    expect(after.state).toBe('PaymentAuthorized');
    expect(after.payments[0]!.state).toBe('Authorized');
  }, 120_000);
});

describe('cancelling a payment', () => {
  it('of an unpaid order cancels the Vendure payment and expires ours: a late payment is refused', async () => {
    const placed = await placeOrder('cancelled');
    const payment = placed.payments[0]!;
    const cancelled = await mutate<{ id: string; state: string; metadata: Record<string, unknown> }>(
      admin,
      'cancelPayment',
      `mutation($id: ID!) { cancelPayment(id: $id) { ... on Payment { id state metadata } ... on ErrorResult { errorCode message } } }`,
      { id: payment.id },
    );
    expect(cancelled).toMatchObject({ state: 'Cancelled', metadata: { checkoutStatus: 'expired', voidRequested: false, expireRequested: true } });
    const expired = await ourOrder(payment.transactionId);
    expect(expired.status).toBe(OrderStatus.EXPIRED);
    expect(expired.reference).toBe(placed.code);
    expect((await eventsOf(payment.transactionId)).filter((e) => e.type === 'order.expired')).toHaveLength(1);

    // The customer had the checkout open and pays anyway: the service refuses it, nothing is taken.
    const late = await payAsCustomer(payment.transactionId, payment.metadata.public!.clientSecret!).then(
      () => undefined,
      (err: unknown) => ConnectError.from(err),
    );
    expect(late?.code).toBe(Code.FailedPrecondition);
    expect(late?.rawMessage).toMatch(/expired/);
    expect((await ourOrder(payment.transactionId)).status).toBe(OrderStatus.EXPIRED);
    const after = await adminOrder(placed.id);
    expect(after.payments[0]!.state).toBe('Cancelled');
    expect(after.state).not.toBe('PaymentSettled');
  }, 180_000);
});
