// Idempotency-Key on every state-changing call besides order creation: a retry after a lost
// response gets the first answer, a different request with the key is refused, nothing runs twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  // Endpoints point at loopback (port 9, discard), so the suite registers no other host.
  svc = await startTestService({ webhookAllowPrivateNetworks: true });
  shop = await svc.sandbox('Keys shop');
});
afterAll(async () => {
  await svc?.close();
});

function call(method: 'POST' | 'PATCH' | 'DELETE', url: string, key: string | undefined, body?: unknown) {
  return svc.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${shop.test_secret_key}`,
      ...(key ? { 'idempotency-key': key } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function newOrder(): Promise<string> {
  const res = await call('POST', '/v1/orders', undefined, orderBody());
  return res.json().id;
}

describe('Idempotency-Key on state-changing calls', () => {
  it('simulate_transfer: a retry with the key answers the first response instead of 422 order_already_paid', async () => {
    const id = await newOrder();
    const first = await call('POST', `/v1/test_helpers/orders/${id}/simulate_transfer`, 'transfer-1');
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await call('POST', `/v1/test_helpers/orders/${id}/simulate_transfer`, 'transfer-1');
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    const paidEvents = await svc.db.knex('events').where({ order_id: id, type: 'order.paid' });
    expect(paidEvents).toHaveLength(1);
    // Without the key, a repeat is a new request: the order is paid already.
    expect((await call('POST', `/v1/test_helpers/orders/${id}/simulate_transfer`, undefined)).statusCode).toBe(422);
  });

  it('the same key for another order (a different request) is idempotency_key_reused, and changes nothing', async () => {
    const a = await newOrder();
    const b = await newOrder();
    expect((await call('POST', `/v1/test_helpers/orders/${a}/simulate_transfer`, 'transfer-2')).statusCode).toBe(200);
    const reused = await call('POST', `/v1/test_helpers/orders/${b}/simulate_transfer`, 'transfer-2');
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    expect((await call('POST', '/v1/orders', 'transfer-2', orderBody())).statusCode).toBe(422);
    expect((await svc.db.knex('orders').where({ id: b }).first()).status).toBe('pending');
  });

  it('a failed request gives its key back: a corrected request may use it', async () => {
    const refused = await call('POST', '/v1/webhook_endpoints', 'endpoint-1', { url: 'not a url' });
    expect(refused.statusCode).toBe(400);
    const created = await call('POST', '/v1/webhook_endpoints', 'endpoint-1', { url: 'http://127.0.0.1:9/hooks' });
    expect(created.statusCode).toBe(201);
    const again = await call('POST', '/v1/webhook_endpoints', 'endpoint-1', { url: 'http://127.0.0.1:9/hooks' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(created.json());
    const rows = await svc.db.knex('webhook_endpoints').where({ url: 'http://127.0.0.1:9/hooks', merchant_id: shop.merchant_id });
    expect(rows).toHaveLength(1);
  });

  it('concurrent requests with one key run the work once; the others wait for it and replay its answer', async () => {
    const created = (await call('POST', '/v1/webhook_endpoints', undefined, { url: 'http://127.0.0.1:9/rotating' })).json();
    const answers = await Promise.all(Array.from({ length: 10 }, () => call('POST', `/v1/webhook_endpoints/${created.id}/rotate_secret`, 'rotate-1', {})));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((r) => r.json().secret)).size).toBe(1);
    expect(answers.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(9);
    const secrets = await svc.db.knex('webhook_endpoint_secrets').where({ endpoint_id: created.id });
    expect(secrets).toHaveLength(2); // the first and exactly one rotation
  });

  it('covers update, delete, replay and redeliver too', async () => {
    const created = (await call('POST', '/v1/webhook_endpoints', undefined, { url: 'http://127.0.0.1:9/more' })).json();
    for (const [method, url, body] of [
      ['PATCH', `/v1/webhook_endpoints/${created.id}`, { description: 'x' }],
      ['POST', `/v1/webhook_endpoints/${created.id}/replay`, { since: '2020-01-01T00:00:00Z' }],
      ['DELETE', `/v1/webhook_endpoints/${created.id}`, undefined],
    ] as const) {
      const first = await call(method, url, `k-${method}-${url}`, body);
      expect(first.statusCode, url).toBe(200);
      const again = await call(method, url, `k-${method}-${url}`, body);
      expect(again.statusCode, url).toBe(200);
      expect(again.headers['idempotent-replayed'], url).toBe('true');
    }
    const event = (await svc.app.inject({ method: 'GET', url: '/v1/events?limit=1', headers: { authorization: `Bearer ${shop.test_secret_key}` } })).json().data[0];
    expect((await call('POST', `/v1/events/${event.id}/redeliver`, 'redeliver-1', {})).statusCode).toBe(200);
    expect((await call('POST', `/v1/events/${event.id}/redeliver`, 'redeliver-1', {})).headers['idempotent-replayed']).toBe('true');
  });
});
