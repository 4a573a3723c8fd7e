// Webhook endpoint rules that need no delivery: the subscription list and the default endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/application/merchant/create-sandbox.ts';
import { startTestService, type TestService } from './support/service.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  // Endpoints point at loopback (port 9, discard), so the suite registers no other host.
  svc = await startTestService({ webhookAllowPrivateNetworks: true });
  shop = await svc.sandbox('Endpoints shop');
});
afterAll(async () => {
  await svc?.close();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) =>
  svc.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${shop.test_secret_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });

describe('webhook endpoints', () => {
  it('refuses an empty enabled_events on create, and subscribes to everything when it is left out', async () => {
    const empty = await call('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', enabled_events: [] });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error).toMatchObject({ code: 'enabled_events_invalid', param: 'enabled_events' });
    const all = await call('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks' });
    expect(all.statusCode).toBe(201);
    expect(all.json().enabled_events).toEqual(['*']);
  });

  it('keeps the default endpoint: DELETE is refused with a way out, and it stays listed', async () => {
    const listed = (await call('GET', '/v1/webhook_endpoints')).json().data as { id: string; is_default: boolean }[];
    const fallback = listed.find((e) => e.is_default)!;
    const refused = await call('DELETE', `/v1/webhook_endpoints/${fallback.id}`);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error).toMatchObject({ code: 'default_endpoint_protected', message: expect.stringMatching(/disabled/) });
    expect((await call('GET', `/v1/webhook_endpoints/${fallback.id}`)).statusCode).toBe(200);
  });
});

describe('request bodies the gateway reads for the core', () => {
  it('says why a body with a __proto__ key is refused, and shows an amount that overflowed as such', async () => {
    const proto = await call('POST', '/v1/orders', JSON.parse('{"__proto__":{"admin":true},"amount":100}'));
    expect(proto.statusCode).toBe(400);
    const raw = await svc.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' },
      payload: '{"__proto__":{"admin":true},"amount":100,"currency":"EUR","reference":"r"}',
    });
    expect(raw.json().error).toMatchObject({ code: 'invalid_json', message: expect.stringMatching(/__proto__/) });
    const huge = await svc.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' },
      payload: '{"amount":1e400,"currency":"EUR","reference":"r"}',
    });
    expect(huge.json().error).toMatchObject({ code: 'parameter_invalid_integer', message: expect.stringMatching(/Infinity is not/) });
  });

  it('answers a checkout id too long to be one with the HTML not-found page', async () => {
    const res = await svc.app.inject({ method: 'GET', url: `/c/${'x'.repeat(150)}` });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  });
});
