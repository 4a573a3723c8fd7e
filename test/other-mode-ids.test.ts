// An id of the caller's own merchant in the other mode is still 404 resource_missing, but the message
// says so, as Stripe's does ("a similar object exists in test mode, but a live mode key was used"), in
// both directions and for every resource named by id. Another merchant's id is answered exactly as an
// id that does not exist: the hint never tells anyone about objects that are not theirs.
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { orderBody } from './support/order-fixtures.ts';
import { startTestService, type TestService } from './support/service.ts';

let svc: TestService;
let shop: SandboxCredentials;
let other: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Two modes shop');
  other = await svc.sandbox('Another merchant');
});
afterAll(async () => {
  await svc?.close();
});

async function call(key: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  const res = await svc.app.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  return { status: res.statusCode, json: res.json() };
}

async function created(key: string, url: string, body: unknown): Promise<string> {
  const res = await call(key, 'POST', url, body);
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.id as string;
}

const liveSaysTest = '; a similar object exists in test mode, but a live mode key was used to make this request.';
const testSaysLive = '; a similar object exists in live mode, but a test mode key was used to make this request.';

describe('an order of the other mode', () => {
  it('read with a live key: 404 resource_missing that says it exists in test mode', async () => {
    const id = await created(shop.test_secret_key, '/v1/orders', orderBody());
    const res = await call(shop.live_secret_key, 'GET', `/v1/orders/${id}`);
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
    expect(res.json.error.message).toBe(`No such order: "${id}"${liveSaysTest}`);
    // The order is untouched and still the test key's.
    expect((await call(shop.test_secret_key, 'GET', `/v1/orders/${id}`)).status).toBe(200);
  });

  it('read with a test key: says it exists in live mode', async () => {
    const id = await created(shop.live_secret_key, '/v1/orders', orderBody());
    const res = await call(shop.test_secret_key, 'GET', `/v1/orders/${id}`);
    expect(res.status).toBe(404);
    expect(res.json.error.message).toBe(`No such order: "${id}"${testSaysLive}`);
  });

  it('acted on (refund, expire) with the other key: the same hint', async () => {
    const id = await created(shop.test_secret_key, '/v1/orders', orderBody());
    const refund = await call(shop.live_secret_key, 'POST', `/v1/orders/${id}/refunds`, { reason: 'duplicate' });
    expect(refund.status).toBe(404);
    expect(refund.json.error.message).toContain(liveSaysTest);
    const expire = await call(shop.live_secret_key, 'POST', `/v1/orders/${id}/expire`);
    expect(expire.status).toBe(404);
    expect(expire.json.error.message).toContain(liveSaysTest);
    expect((await call(shop.test_secret_key, 'GET', `/v1/orders/${id}`)).json.status).toBe('pending');
  });

  it('over Connect too', async () => {
    const id = await created(shop.test_secret_key, '/v1/orders', orderBody());
    const client = createClient(OrderService, createRouterTransport(svc.core.routes));
    const err = await client.getOrder({ id }, { headers: { authorization: `Bearer ${shop.live_secret_key}` } }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.NotFound);
    expect(err?.rawMessage).toBe(`No such order: "${id}"${liveSaysTest}`);
  });
});

describe('other resources named by id', () => {
  it('a customer, a webhook endpoint, a payment link and an event of the other mode', async () => {
    const customer = await created(shop.test_secret_key, '/v1/customers', { email: 'ada@example.com' });
    const endpoint = await created(shop.live_secret_key, '/v1/webhook_endpoints', { url: 'https://shop.example/hooks' });
    const link = await created(shop.test_secret_key, '/v1/links', { amount: 500, currency: 'EUR', reference: 'link-modes', type: 'collecting' });
    const order = await created(shop.test_secret_key, '/v1/orders', orderBody());
    const events = await call(shop.test_secret_key, 'GET', `/v1/events?order_id=${order}`);
    const event = events.json.data[0].id as string;

    const customerRes = await call(shop.live_secret_key, 'GET', `/v1/customers/${customer}`);
    expect(customerRes.status).toBe(404);
    expect(customerRes.json.error.message).toContain(liveSaysTest);
    const endpointRes = await call(shop.test_secret_key, 'GET', `/v1/webhook_endpoints/${endpoint}`);
    expect(endpointRes.status).toBe(404);
    expect(endpointRes.json.error.message).toContain(testSaysLive);
    const linkRes = await call(shop.live_secret_key, 'GET', `/v1/links/${link}`);
    expect(linkRes.status).toBe(404);
    expect(linkRes.json.error.message).toContain(liveSaysTest);
    const eventRes = await call(shop.live_secret_key, 'GET', `/v1/events/${event}`);
    expect(eventRes.status).toBe(404);
    expect(eventRes.json.error.message).toContain(liveSaysTest);
  });
});

describe('what is not told', () => {
  it("another merchant's order, in either of its modes, is answered as an id that does not exist", async () => {
    const testOrder = await created(shop.test_secret_key, '/v1/orders', orderBody());
    const liveOrder = await created(shop.live_secret_key, '/v1/orders', orderBody());
    for (const key of [other.test_secret_key, other.live_secret_key]) {
      for (const id of [testOrder, liveOrder]) {
        const res = await call(key, 'GET', `/v1/orders/${id}`);
        expect(res.status).toBe(404);
        expect(res.json.error.message).toBe(`No such order: "${id}".`);
      }
    }
  });

  it('an id nobody has is answered plainly', async () => {
    const res = await call(shop.live_secret_key, 'GET', '/v1/orders/ord_doesNotExist000000000000');
    expect(res.status).toBe(404);
    expect(res.json.error.message).toBe('No such order: "ord_doesNotExist000000000000".');
  });

  it('an anonymous checkout call learns nothing of modes', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/c/doesNotExist000000000000' });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('mode key');
  });
});
