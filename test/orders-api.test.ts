import { ServiceUnavailableError } from '../src/kernel/ports/errors.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../src/composition/core.ts';
import { buildGateway } from '../gateway/app.ts';
import { hashApiKey } from '../src/modules/merchant/adapters/postgres/postgres-merchant-repository.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { rowCounts } from './support/database.ts';
import { startTestService, TEST_CHECKOUT_URL, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

let svc: TestService;
let acme: SandboxCredentials;
let globex: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  acme = await svc.sandbox('Acme');
  globex = await svc.sandbox('Globex');
});

afterAll(async () => {
  await svc?.close();
});

function auth(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

function post(body: unknown, headers: Record<string, string> = auth(acme.test_secret_key), rawBody?: string) {
  return svc.app.inject({
    method: 'POST',
    url: '/v1/orders',
    headers: { 'content-type': 'application/json', ...headers },
    payload: rawBody ?? JSON.stringify(body),
  });
}

function get(url: string, key = acme.test_secret_key) {
  return svc.app.inject({ method: 'GET', url, headers: auth(key) });
}

describe('POST /v1/orders', () => {
  it('creates a pending order with the spec fields and a checkout URL on the merchant checkout host', async () => {
    const res = await post(orderBody({ reference: 'Résumé №1 🧾' }), { ...auth(acme.test_secret_key), 'idempotency-key': 'create-1' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['request-id']).toMatch(/^req_[0-9A-Za-z]{20}$/);
    const order = res.json();
    expect(order).toMatchObject({
      object: 'order',
      reference: 'Résumé №1 🧾',
      amount: 2500,
      currency: 'EUR',
      status: 'pending',
      line_items: [
        { name: 'Green tea', amount: 1500 },
        { name: 'Teapot', amount: 1000 },
      ],
      return_url: 'https://shop.example/thanks',
      livemode: false,
      method: null,
      settlement: null,
      refunds: [],
    });
    expect(order.id).toMatch(/^ord_[0-9A-Za-z]{22,}$/);
    expect(order.checkout_url).toBe(`${TEST_CHECKOUT_URL}/c/${order.id.slice(4)}`);
    expect(new Date(order.created).toISOString()).toBe(order.created);
    expect(typeof order.amount).toBe('number');

    // The order and its event were written together, with the reference and sequence 1.
    const event = await svc.db.knex('events').where({ order_id: order.id }).first();
    expect(event).toMatchObject({ type: 'order.created', reference: 'Résumé №1 🧾', sequence: 1, published_at: null });
    expect(event.id).toMatch(/^evt_/);
    expect(event.data).toMatchObject({ id: order.id, amount: 2500, currency: 'EUR' });
  });

  it('accepts the amount bounds of zero- and three-decimal currencies', async () => {
    expect((await post({ amount: 999_999_999, currency: 'JPY', reference: 'jpy-max' })).statusCode).toBe(201);
    expect((await post({ amount: 999_999_999_999, currency: 'KWD', reference: 'kwd-max' })).statusCode).toBe(201);
    const tooMuchYen = await post({ amount: 1_000_000_000, currency: 'JPY', reference: 'jpy-over' });
    expect(tooMuchYen.statusCode).toBe(400);
    expect(tooMuchYen.json().error).toMatchObject({ code: 'amount_too_large', param: 'amount' });
  });

  const badInputs: Array<[string, unknown, string, string | undefined, string?]> = [
    ['amount missing', { currency: 'EUR', reference: 'r' }, 'parameter_missing', 'amount'],
    ['amount zero', { amount: 0, currency: 'EUR', reference: 'r' }, 'amount_invalid', 'amount'],
    ['amount negative', { amount: -100, currency: 'EUR', reference: 'r' }, 'amount_invalid', 'amount'],
    ['amount fractional', { amount: 10.5, currency: 'EUR', reference: 'r' }, 'parameter_invalid_integer', 'amount'],
    ['amount as string', { amount: '1000', currency: 'EUR', reference: 'r' }, 'parameter_invalid_integer', 'amount'],
    ['amount above 2^53-1', undefined, 'amount_too_large', 'amount', '{"amount": 9007199254740993, "currency": "EUR", "reference": "r"}'],
    ['amount above the EUR bound', { amount: 100_000_000_000, currency: 'EUR', reference: 'r' }, 'amount_too_large', 'amount'],
    ['currency lowercase', { amount: 100, currency: 'eur', reference: 'r' }, 'currency_invalid', 'currency'],
    ['currency unknown', { amount: 100, currency: 'ABC', reference: 'r' }, 'currency_invalid', 'currency'],
    ['currency missing', { amount: 100, reference: 'r' }, 'parameter_missing', 'currency'],
    ['currency a number', { amount: 100, currency: 978, reference: 'r' }, 'parameter_invalid_string', 'currency'],
    ['reference empty', { amount: 100, currency: 'EUR', reference: '' }, 'parameter_missing', 'reference'],
    ['reference 256 characters', { amount: 100, currency: 'EUR', reference: 'x'.repeat(256) }, 'reference_invalid', 'reference'],
    ['reference with NUL', { amount: 100, currency: 'EUR', reference: 'a\u0000b' }, 'parameter_invalid_string', 'reference'],
    ['unknown field', { amount: 100, currency: 'EUR', reference: 'r', customer_email: 'x' }, 'parameter_unknown', 'customer_email'],
    ['unknown line item field', orderBody({ line_items: [{ name: 'a', amount: 2500, sku: 'x' }] }), 'parameter_unknown', 'line_items[0][sku]'],
    ['line items not an array', orderBody({ line_items: { name: 'a' } }), 'parameter_invalid_array', 'line_items'],
    ['line item without name', orderBody({ line_items: [{ amount: 2500 }] }), 'parameter_missing', 'line_items[0][name]'],
    ['line items not summing to amount', orderBody({ amount: 2400 }), 'line_items_sum_mismatch', 'line_items'],
    ['return_url relative', orderBody({ return_url: '/thanks' }), 'return_url_invalid', 'return_url'],
    ['return_url ftp', orderBody({ return_url: 'ftp://shop.example/' }), 'return_url_invalid', 'return_url'],
    ['body an array', [], 'parameter_invalid_object', 'body'],
    ['body not JSON', undefined, 'invalid_json', undefined, '{"amount": 100,'],
  ];

  it.each(badInputs)('rejects %s with 400 and writes nothing', async (_label, body, code, param, raw) => {
    const before = await rowCounts(svc.db.knex);
    const res = await post(body, { ...auth(acme.test_secret_key), 'idempotency-key': `bad-${code}-${param}` }, raw);
    expect(res.statusCode).toBe(400);
    const { error } = res.json();
    expect(error.type).toBe('invalid_request_error');
    expect(error.code).toBe(code);
    expect(error.param).toBe(param);
    expect(error.message.length).toBeGreaterThan(10);
    expect(error.request_id).toBe(res.headers['request-id']);
    expect(await rowCounts(svc.db.knex)).toEqual(before);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['25.5 EUR', { amount: 25.5, currency: 'EUR' }, 'amount', 'amount must be an integer number of minor units: 25.5 is not; for EUR, 25.50 EUR is 2550.'],
    ['25.5 in lowercase eur', { amount: 25.5, currency: 'eur' }, 'amount', 'amount must be an integer number of minor units: 25.5 is not; for EUR, 25.50 EUR is 2550.'],
    ['25.5 JPY (no minor unit)', { amount: 25.5, currency: 'JPY' }, 'amount', 'amount must be an integer number of minor units: 25.5 is not; JPY has no minor unit, so 25 JPY is 25.'],
    ['1.5 KWD (three decimals)', { amount: 1.5, currency: 'KWD' }, 'amount', 'amount must be an integer number of minor units: 1.5 is not; for KWD, 1.500 KWD is 1500.'],
    ['10.555 EUR (more decimals than EUR has)', { amount: 10.555, currency: 'EUR' }, 'amount', 'amount must be an integer number of minor units: 10.555 is not; for EUR, 10.50 EUR is 1050.'],
    ['"25.50" EUR (a string)', { amount: '25.50', currency: 'EUR' }, 'amount', 'amount must be an integer number of minor units: "25.50" is not; for EUR, 10.50 EUR is 1050.'],
    [
      'a line item of 10.5 USD',
      { amount: 2500, currency: 'USD', line_items: [{ name: 'Tea', amount: 10.5 }] },
      'line_items[0][amount]',
      'line_items[0][amount] must be an integer number of minor units: 10.5 is not; for USD, 10.50 USD is 1050.',
    ],
    ['25.5 in an unknown currency', { amount: 25.5, currency: 'ABC' }, 'amount', "amount must be an integer number of minor units: 25.5 is not; the currency's ISO 4217 exponent decides, e.g. 10.50 EUR is 1050 and 1050 JPY is 1050."],
    ['25.5 with no currency', { amount: 25.5 }, 'amount', "amount must be an integer number of minor units: 25.5 is not; the currency's ISO 4217 exponent decides, e.g. 10.50 EUR is 1050 and 1050 JPY is 1050."],
  ])('a fractional amount (%s) is refused with the minor-unit rule for the currency, and nothing is written', async (_label, fields, param, message) => {
    const before = await rowCounts(svc.db.knex);
    const res = await post({ reference: 'fraction', ...fields });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid_integer', param, message });
    expect(await rowCounts(svc.db.knex)).toEqual(before);
  });

  it('"amount": 25.00 is the JSON number 25, so it is taken as 25 minor units (0.25 EUR), as documented', async () => {
    const res = await post(undefined, auth(acme.test_secret_key), '{"amount": 25.00, "currency": "EUR", "reference": "twenty-five-cents", "line_items": [{"name": "Stamp", "amount": 25.0}]}');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ amount: 25, currency: 'EUR', line_items: [{ name: 'Stamp', amount: 25 }] });
  });

  it('answers 415 for a body that is not JSON', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...auth(acme.test_secret_key), 'content-type': 'text/plain' }, payload: 'amount=1' });
    expect(res.statusCode).toBe(415);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type' });
  });
});

describe('authentication', () => {
  it.each<[string, Record<string, string>, number, string]>([
    ['no Authorization header', {}, 401, 'api_key_missing'],
    ['a non-Bearer scheme', { authorization: 'Basic c2tfdGVzdDo=' }, 401, 'api_key_malformed'],
    ['a malformed key', { authorization: 'Bearer sk_test_123' }, 401, 'api_key_malformed'],
    ['an unknown key', { authorization: `Bearer sk_test_${'Z'.repeat(32)}` }, 401, 'api_key_invalid'],
  ])('refuses %s', async (_label, headers, status, code) => {
    const before = await rowCounts(svc.db.knex);
    const res = await post(orderBody(), headers);
    expect(res.statusCode).toBe(status);
    expect(res.json().error).toMatchObject({ type: 'authentication_error', code });
    expect(await rowCounts(svc.db.knex)).toEqual(before);
  });

  it('judges the key before the body', async () => {
    const res = await post({ amount: 'x', nonsense: true }, {});
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('api_key_missing');
  });

  it('refuses a reference with a lone surrogate instead of storing U+FFFD', async () => {
    const before = await rowCounts(svc.db.knex);
    const res = await post(undefined, auth(acme.test_secret_key), '{"amount": 100, "currency": "EUR", "reference": "a\\ud800b"}');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'parameter_invalid_string', param: 'reference' });
    expect(await rowCounts(svc.db.knex)).toEqual(before);
  });

  it('refuses a publishable key with 403', async () => {
    const res = await post(orderBody(), auth(acme.test_publishable_key));
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatchObject({ type: 'permission_error', code: 'secret_key_required' });
  });

  it('refuses a revoked key with 401', async () => {
    const shop = await svc.sandbox('Revoked shop');
    expect((await post(orderBody(), auth(shop.test_secret_key))).statusCode).toBe(201);
    const key = await svc.db.knex('api_keys').where({ key_hash: hashApiKey(shop.test_secret_key) }).first();
    await svc.core.merchants.revokeKey(key.id);
    const res = await post(orderBody(), auth(shop.test_secret_key));
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('api_key_invalid');
  });

  it('stores keys only as hashes', async () => {
    const rows = await svc.db.knex('api_keys').select('*');
    const dump = JSON.stringify(rows);
    for (const key of [acme.test_secret_key, acme.live_secret_key, acme.test_publishable_key]) {
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(key.slice(8));
    }
    expect(rows.find((r) => r.key_hash === hashApiKey(acme.test_secret_key))).toBeDefined();
  });
});

describe('isolation of merchants and modes', () => {
  it('answers 404 for another merchant or the other mode, and 200 for the owner', async () => {
    const created = (await post(orderBody({ reference: 'isolated' }))).json();
    expect((await get(`/v1/orders/${created.id}`)).statusCode).toBe(200);
    for (const key of [globex.test_secret_key, acme.live_secret_key, globex.live_secret_key]) {
      const res = await get(`/v1/orders/${created.id}`, key);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
    }
    const unknown = await get('/v1/orders/ord_doesnotexist000000000000');
    expect(unknown.statusCode).toBe(404);
    // Lists do not leak across either.
    const globexList = (await get('/v1/orders?reference=isolated', globex.test_secret_key)).json();
    expect(globexList.data).toEqual([]);
    const liveList = (await get('/v1/orders?reference=isolated', acme.live_secret_key)).json();
    expect(liveList.data).toEqual([]);
  });

  it('runs live keys through the same path, marking orders livemode', async () => {
    const res = await post(orderBody({ reference: 'live-one' }), auth(acme.live_secret_key));
    expect(res.statusCode).toBe(201);
    expect(res.json().livemode).toBe(true);
    expect((await get(`/v1/orders/${res.json().id}`, acme.live_secret_key)).json().livemode).toBe(true);
  });

  it('does not let a cursor from another merchant page through its orders', async () => {
    const theirs = (await post(orderBody({ reference: 'cursor' }), auth(globex.test_secret_key))).json();
    const res = await get(`/v1/orders?starting_after=${theirs.id}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'starting_after_invalid', param: 'starting_after' });
  });
});

describe('GET /v1/orders', () => {
  it('lists newest first with cursor pagination and a reference filter', async () => {
    const shop = await svc.sandbox('Lister');
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await post(orderBody({ reference: i % 2 === 0 ? 'even' : `odd-${i}` }), auth(shop.test_secret_key));
      ids.push(res.json().id);
    }
    const newestFirst = [...ids].reverse();
    const page1 = (await get('/v1/orders?limit=3', shop.test_secret_key)).json();
    expect(page1).toMatchObject({ object: 'list', url: '/v1/orders', has_more: true });
    expect(page1.data.map((o: { id: string }) => o.id)).toEqual(newestFirst.slice(0, 3));
    const page2 = (await get(`/v1/orders?limit=3&starting_after=${page1.data[2].id}`, shop.test_secret_key)).json();
    expect(page2.data.map((o: { id: string }) => o.id)).toEqual(newestFirst.slice(3, 6));
    const page3 = (await get(`/v1/orders?limit=3&starting_after=${page2.data[2].id}`, shop.test_secret_key)).json();
    expect(page3.data.map((o: { id: string }) => o.id)).toEqual(newestFirst.slice(6));
    expect(page3.has_more).toBe(false);

    const even = (await get('/v1/orders?reference=even', shop.test_secret_key)).json();
    expect(even.data.map((o: { id: string }) => o.id)).toEqual([ids[6], ids[4], ids[2], ids[0]]);
    expect((await get('/v1/orders', shop.test_secret_key)).json().data).toHaveLength(7);
  });

  it.each([
    ['limit=0', 'limit_invalid', 'limit'],
    ['limit=101', 'limit_invalid', 'limit'],
    ['limit=abc', 'limit_invalid', 'limit'],
    ['colour=red', 'parameter_unknown', 'colour'],
  ])('rejects ?%s', async (query, code, param) => {
    const res = await get(`/v1/orders?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code, param });
  });
});

describe('idempotency', () => {
  it('replays the original status and body with Idempotent-Replayed, and creates one order', async () => {
    const headers = { ...auth(acme.test_secret_key), 'idempotency-key': 'replay-me' };
    const first = await post(orderBody({ reference: 'replay' }), headers);
    const second = await post(orderBody({ reference: 'replay' }), headers);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    // The same order; the client secret only in the first answer (the service keeps only its hash).
    const { client_secret: secret, ...order } = first.json();
    expect(secret).toMatch(/^ord_[0-9A-Za-z]+_secret_/);
    expect(second.json()).toEqual(order);
    expect(await svc.db.knex('orders').where({ reference: 'replay' }).count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);
  });

  it('answers 422 for a key reused with another body, and stores nothing', async () => {
    const headers = { ...auth(acme.test_secret_key), 'idempotency-key': 'reused-key' };
    expect((await post(orderBody({ reference: 'first-use' }), headers)).statusCode).toBe(201);
    const before = await rowCounts(svc.db.knex);
    const res = await post(orderBody({ reference: 'first-use', amount: 2600, line_items: [] }), headers);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    expect(await rowCounts(svc.db.knex)).toEqual(before);
  });

  it('scopes keys to merchant and mode', async () => {
    const key = { 'idempotency-key': 'shared-key' };
    const a = (await post(orderBody(), { ...auth(acme.test_secret_key), ...key })).json();
    const b = (await post(orderBody(), { ...auth(globex.test_secret_key), ...key })).json();
    const c = (await post(orderBody(), { ...auth(acme.live_secret_key), ...key })).json();
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
  });

  it('rejects keys longer than 255 characters', async () => {
    const res = await post(orderBody(), { ...auth(acme.test_secret_key), 'idempotency-key': 'k'.repeat(256) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'idempotency_key_invalid', param: 'Idempotency-Key' });
    expect((await post(orderBody(), { ...auth(acme.test_secret_key), 'idempotency-key': 'k'.repeat(255) })).statusCode).toBe(201);
  });

  it('creates exactly one order for 50 concurrent requests with one key', async () => {
    const shop = await svc.sandbox('Concurrent');
    const headers = { ...auth(shop.test_secret_key), 'idempotency-key': 'fifty-at-once' };
    const responses = await Promise.all(Array.from({ length: 50 }, () => post(orderBody({ reference: 'concurrent' }), headers)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(50).fill(201));
    const ids = new Set(responses.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(49);
    const merchant = shop.merchant_id;
    expect(await svc.db.knex('orders').where({ merchant_id: merchant }).count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);
    expect(await svc.db.knex('events').where({ merchant_id: merchant }).count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);
    expect(svc.internalErrors).toEqual([]);
  });
});

describe('errors everywhere', () => {
  it('answers unknown routes with the error body and a Request-Id', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'route_not_found', request_id: res.headers['request-id'] });
  });

  it('answers 503 with the error body when Postgres is unreachable, and keeps serving', async () => {
    const core = createCore({
      knex: (await import('../src/kernel/adapters/postgres/database.ts')).createDatabase({ url: 'postgres://postgres@127.0.0.1:1/nowhere', acquireTimeoutMs: 500 }),
      apiBaseUrl: 'http://api.test',
      checkoutHost: TEST_CHECKOUT_URL,
      onInternalError: (err) => logged.push(err),
    });
    // Logged for the operator as the store's unavailability (its cause kept), never as a fault of ours.
    const logged: unknown[] = [];
    const app = await buildGateway({ routes: core.routes, publicUrl: 'http://api.test' });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await app.inject({ method: 'POST', url: '/v1/orders', headers: { ...auth(acme.test_secret_key), 'content-type': 'application/json' }, payload: orderBody() });
        expect(res.statusCode).toBe(503);
        expect(res.json().error).toMatchObject({ type: 'api_error', code: 'service_unavailable', request_id: res.headers['request-id'] });
      }
      expect((await app.inject({ method: 'GET', url: '/v1/orders/ord_x', headers: auth(acme.test_secret_key) })).statusCode).toBe(503);
      expect(logged.length).toBeGreaterThanOrEqual(3);
      expect(logged.every((err) => err instanceof ServiceUnavailableError)).toBe(true);
    } finally {
      await app.close();
    }
  });
});

describe('the edge of the REST API', () => {
  it('judges the key before any parameter, whatever part of the request is at fault', async () => {
    const anonymous = [
      svc.app.inject({ method: 'GET', url: '/v1/orders/bad-id' }),
      svc.app.inject({ method: 'GET', url: '/v1/orders?starting_after=bad-id' }),
      svc.app.inject({ method: 'GET', url: '/v1/events?order_id=bad-id' }),
      svc.app.inject({ method: 'GET', url: '/v1/orders?reference=a%00b' }),
      svc.app.inject({ method: 'GET', url: '/v1/orders?reference=%FF' }),
      svc.app.inject({ method: 'GET', url: '/v1/orders/ord_x?colour=red' }),
      svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { 'content-type': 'application/json' }, payload: '{"amount": 100, "currency": "EUR", "reference": "a\\u0000b"}' }),
      svc.app.inject({ method: 'POST', url: '/v1/test_helpers/orders/bad-id/simulate_transfer' }),
    ];
    for (const res of await Promise.all(anonymous)) {
      expect({ status: res.statusCode, code: res.json().error.code }).toEqual({ status: 401, code: 'api_key_missing' });
    }
    const publishable = await get('/v1/events?order_id=bad-id', acme.test_publishable_key);
    expect(publishable.statusCode).toBe(403);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a day that does not exist', { expires_at: '2030-11-31T12:00:00Z' }, 'parameter_invalid_timestamp', 'expires_at'],
    ['an hour that does not exist', { expires_at: '2030-11-30T24:30:00Z' }, 'parameter_invalid_timestamp', 'expires_at'],
    ['a line item that is null', { line_items: [null] }, 'parameter_invalid_object', 'line_items[0]'],
  ])('refuses %s', async (_label, fields, code, param) => {
    const before = await rowCounts(svc.db.knex);
    const res = await post(orderBody(fields));
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code, param });
    expect(await rowCounts(svc.db.knex)).toEqual(before);
  });

  it('reads null as absent for an optional list', async () => {
    const res = await post(orderBody({ reference: 'null-items', line_items: null }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().line_items).toEqual([]);
  });

  it('refuses a body that is not UTF-8, or says it is in another charset, instead of storing U+FFFD', async () => {
    const before = await rowCounts(svc.db.knex);
    const bytes = Buffer.concat([Buffer.from('{"amount": 100, "currency": "EUR", "reference": "a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}')]);
    const invalid = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...auth(acme.test_secret_key), 'content-type': 'application/json' }, payload: bytes });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error).toMatchObject({ code: 'invalid_json', message: 'The body is not valid UTF-8.' });
    const latin1 = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...auth(acme.test_secret_key), 'content-type': 'application/json; charset=latin1' }, payload: JSON.stringify(orderBody()) });
    expect(latin1.statusCode).toBe(415);
    const utf8 = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...auth(acme.test_secret_key), 'content-type': 'application/json; charset=UTF-8' }, payload: JSON.stringify(orderBody({ reference: 'utf8-charset' })) });
    expect(utf8.statusCode).toBe(201);
    expect((await rowCounts(svc.db.knex)).orders).toBe(before.orders + 1);
  });

  it('refuses a query that is not percent-encoded UTF-8, and parameters a route does not take', async () => {
    const bad = await get('/v1/orders?reference=%ED%A0%80');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'parameter_invalid_string', param: 'reference' });
    const unknown = await get('/v1/orders/ord_x?colour=red');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: 'parameter_unknown', param: 'colour' });
    const { id } = (await post(orderBody({ reference: 'transfer-with-body' }))).json();
    const withBody = await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers: { ...auth(acme.test_secret_key), 'content-type': 'application/json' }, payload: '{"amount": 999999}' });
    expect(withBody.statusCode).toBe(400);
    expect(withBody.json().error).toMatchObject({ code: 'parameter_unknown', param: 'amount' });
    expect((await get(`/v1/orders/${id}`)).json().status).toBe('pending');
  });
});
