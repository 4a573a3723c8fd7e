// Property-based fuzzing of every REST route, every Connect method and the payment link page with hostile input (NUL bytes,
// lone surrogates, percent-escapes, huge strings, wrong JSON types, random bytes as Protobuf): no answer
// is a 5xx, every error has the documented body, and a refused request writes no row. A fixed seed and a
// bounded number of runs keep it deterministic and quick; FUZZ_RUNS raises the count locally.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import fc from 'fast-check';
import type { DescMessage } from '@bufbuild/protobuf';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { CheckoutService } from '../src/gen/checkout/v1/checkout_pb.ts';
import { TestHelperService } from '../src/gen/checkout/v1/test_helpers_pb.ts';
import { EventService, WebhookEndpointService } from '../src/gen/checkout/v1/webhook_pb.ts';
import { PaymentLinkPageService } from '../src/gen/checkout/v1/payment_link_pb.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

const SEED = 20261122;
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

let svc: TestService;
let shop: SandboxCredentials;
const ids: string[] = [];

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Fuzz shop');
  const created = await svc.app.inject({
    method: 'POST',
    url: '/v1/orders',
    headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' },
    payload: orderBody(),
  });
  const order = created.json();
  const endpoints = (await svc.app.inject({ method: 'GET', url: '/v1/webhook_endpoints', headers: { authorization: `Bearer ${shop.test_secret_key}` } })).json();
  const event = (await svc.app.inject({ method: 'GET', url: '/v1/events?limit=1', headers: { authorization: `Bearer ${shop.test_secret_key}` } })).json();
  const link = (
    await svc.app.inject({
      method: 'POST',
      url: '/v1/links',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' },
      payload: { amount: 2500, currency: 'EUR', reference: 'fuzz-link', type: 'collecting' },
    })
  ).json();
  ids.push(order.id, order.id.slice(4), endpoints.data[0].id, event.data[0].id, link.id, new URL(link.url).pathname.slice('/l/'.length));
});
afterAll(async () => {
  await svc?.close();
});

// ------------------------------------------------------------------ what a hostile client sends

const nasty = fc.constantFrom(
  '\u0000',
  'ord_\u0000',
  '\ud800',
  'a\udfffb',
  '%00',
  '%',
  '%zz',
  '%ff%fe',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '',
  ' ',
  '\u202e',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  'x'.repeat(5000),
  '9'.repeat(40),
  '-1',
  '1e400',
  'null',
  'NaN',
  'EUR',
  'order.paid',
  '*',
  'https://127.0.0.1/hook',
  'http://[::1]:1/',
);
const hostileString = fc.oneof(nasty, fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 12 }), fc.constantFrom(...['ord_x', 'we_x', 'evt_x']));
// Real ids of the fixture, read when a value is generated (they exist only once beforeAll ran).
const withIds = () => fc.oneof(hostileString, fc.nat().map((i) => ids[i % ids.length]!));

const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    withIds(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom(2 ** 53, -(2 ** 63), 25.5, 0, 1e21),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('name', 'amount', 'url')), tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** Header values Node can send: no CR, LF or NUL (HTTP cannot carry them anyway). */
const headerValue = fc.oneof(
  fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, 'x')),
  fc.constantFrom('Bearer ', 'Bearer sk_test_', 'Bearer pk_test_abc', 'Basic abc', 'Bearer sk_live_' + 'a'.repeat(300)),
);

/** Percent-encodes anything, lone surrogates included (encodeURIComponent throws on them). */
function rawEncode(value: string): string {
  return value.isWellFormed() ? encodeURIComponent(value) : [...value].map((ch) => (ch.isWellFormed() ? encodeURIComponent(ch) : '%ED%A0%80')).join('');
}
const pathSegment = fc.oneof(
  withIds().map(rawEncode),
  fc.constantFrom('%', '%zz', '%00', '%ff', 'a%2Fb', '..', '%E2%82'),
);

// ------------------------------------------------------------------ what the answers must be

const REST_TYPES = ['invalid_request_error', 'authentication_error', 'permission_error', 'idempotency_error', 'rate_limit_error', 'card_error', 'api_error'];
const CONNECT_CODES = ['canceled', 'unknown', 'invalid_argument', 'deadline_exceeded', 'not_found', 'already_exists', 'permission_denied', 'resource_exhausted', 'failed_precondition', 'aborted', 'out_of_range', 'unimplemented', 'internal', 'unavailable', 'data_loss', 'unauthenticated'];

/**
 * Row count and newest row version of every table: any insert, update or delete changes it. Except the
 * rate limits' buckets: a request a limit refuses is counted there, as it must be.
 */
async function snapshot(): Promise<string> {
  const tables = (await svc.db.knex.raw<{ rows: { table_name: string }[] }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'rate_limit_buckets' ORDER BY table_name`)).rows.map((r) => r.table_name);
  const sql = tables.map((t) => `SELECT '${t}' AS t, count(*) AS n, coalesce(max(xmin::text::bigint), 0) AS x FROM "${t}"`).join(' UNION ALL ');
  return JSON.stringify((await svc.db.knex.raw(sql)).rows);
}

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

async function send(request: Sent): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const res = await svc.app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload });
  return { status: res.statusCode, body: res.body, headers: res.headers };
}

function checkAnswer(request: Sent, res: { status: number; body: string }, connect: boolean, before: string, after: string): void {
  const where = `${request.method} ${request.url.slice(0, 120)} → ${res.status} ${res.body.slice(0, 300)}`;
  expect(res.status, where).toBeLessThan(500);
  if (res.status < 400) return;
  expect(after, `a refused request wrote rows: ${where}`).toBe(before);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  if (connect) {
    expect(CONNECT_CODES, where).toContain(body.code);
    expect(typeof body.message, where).toBe('string');
  } else {
    const error = body.error as Record<string, unknown>;
    expect(error, where).toBeTypeOf('object');
    expect(REST_TYPES, where).toContain(error.type);
    expect(error.code, where).toMatch(/^[a-z_]+$/);
    expect(typeof error.message, where).toBe('string');
    expect(error.request_id, where).toMatch(/^req_/);
  }
}

// ------------------------------------------------------------------ the properties

describe('fuzzing with hostile input', () => {
  it('every REST route: no 5xx, the documented error body, no row written on a 4xx', async () => {
    const routes = svc.app.restRoutes.map((r) => r.split(' ') as [string, string]);
    expect(routes.length).toBeGreaterThan(10);
    const keys = () => fc.constantFrom(shop.test_secret_key, shop.test_publishable_key, shop.live_secret_key);
    const arb = fc.record({
      route: fc.constantFrom(...routes),
      params: fc.array(pathSegment, { minLength: 3, maxLength: 3 }),
      query: fc.dictionary(fc.constantFrom('limit', 'starting_after', 'reference', 'type', 'order_id', 'bogus', '%00'), withIds(), { maxKeys: 3 }),
      auth: fc.oneof(keys().map((k) => `Bearer ${k}`), headerValue, fc.constant(undefined)),
      idempotencyKey: fc.option(headerValue, { nil: undefined }),
      body: fc.oneof(
        jsonValue.map((v) => ({ type: 'application/json', payload: JSON.stringify(v) })),
        fc.record({ amount: jsonValue, currency: withIds(), reference: withIds(), line_items: jsonValue, return_url: withIds(), url: withIds(), enabled_events: jsonValue }, { requiredKeys: [] }).map((v) => ({ type: 'application/json', payload: JSON.stringify(v) })),
        fc.string({ maxLength: 50 }).map((s) => ({ type: 'application/json', payload: s })),
        fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16').map((type) => ({ type, payload: 'a=1' })),
        fc.constant(undefined),
      ),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ route, params, query, auth, idempotencyKey, body }) => {
        const [method, template] = route;
        let i = 0;
        const path = template.replace(/\{\w+\}/g, () => params[i++]!);
        const qs = Object.entries(query)
          .map(([k, v]) => `${rawEncode(k)}=${rawEncode(v)}`)
          .join('&');
        const headers: Record<string, string> = {};
        if (auth !== undefined) headers.authorization = auth;
        if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
        if (body && method !== 'get') headers['content-type'] = body.type;
        const request: Sent = { method: method.toUpperCase(), url: qs ? `${path}?${qs}` : path, headers, payload: method === 'get' ? undefined : body?.payload };
        const before = await snapshot();
        const res = await send(request);
        checkAnswer(request, res, false, before, await snapshot());
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(svc.internalErrors).toEqual([]);
  });

  it('every Connect method (JSON and binary Protobuf): no 5xx, the Connect error body, no row written on a 4xx', async () => {
    const methods = [OrderService, CheckoutService, TestHelperService, WebhookEndpointService, EventService, PaymentLinkPageService].flatMap((service) =>
      service.methods.filter((m) => m.methodKind === 'unary').map((m) => ({ path: `/${service.typeName}/${m.name}`, input: m.input })),
    );
    const fieldsOf = (desc: DescMessage) => desc.fields.map((f) => f.jsonName);
    const arb = fc.record({
      method: fc.constantFrom(...methods),
      json: fc.boolean(),
      values: fc.array(fc.oneof(withIds(), jsonValue), { minLength: 8, maxLength: 8 }),
      extra: fc.dictionary(hostileString, jsonValue, { maxKeys: 2 }),
      bytes: fc.uint8Array({ maxLength: 64 }),
      auth: fc.oneof(fc.constantFrom(shop.test_secret_key, shop.live_secret_key).map((k) => `Bearer ${k}`), headerValue),
      token: fc.oneof(headerValue, fc.constant(undefined)),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ method, json, values, extra, bytes, auth, token }) => {
        const headers: Record<string, string> = { authorization: auth, 'content-type': json ? 'application/json' : 'application/proto' };
        if (token !== undefined) headers['checkout-token'] = token;
        let payload: string | Buffer;
        if (json) {
          const message: Record<string, unknown> = { ...extra };
          fieldsOf(method.input).forEach((name, i) => {
            if (values[i % values.length] !== undefined) message[name] = values[i % values.length];
          });
          payload = JSON.stringify(message);
        } else {
          payload = Buffer.from(bytes);
        }
        const request: Sent = { method: 'POST', url: method.path, headers, payload };
        const before = await snapshot();
        const res = await send(request);
        checkAnswer(request, res, true, before, await snapshot());
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(svc.internalErrors).toEqual([]);
  });

  it('the payment link page (GET /l/<anything>): no 5xx, HTML with the security headers, and nothing ever written', async () => {
    const arb = fc.record({ segment: pathSegment, language: fc.option(headerValue, { nil: undefined }), cookie: fc.option(headerValue, { nil: undefined }) });
    await fc.assert(
      fc.asyncProperty(arb, async ({ segment, language, cookie }) => {
        const headers: Record<string, string> = {};
        if (language !== undefined) headers['accept-language'] = language;
        if (cookie !== undefined) headers.cookie = cookie;
        const request: Sent = { method: 'GET', url: `/l/${segment}`, headers };
        const before = await snapshot();
        const res = await send(request);
        const where = `GET ${request.url.slice(0, 120)} → ${res.status}`;
        expect(res.status, where).toBeLessThan(500);
        if (String(res.headers['content-type']).startsWith('application/json')) {
          // A path that does not decode, or leaves /l/ (".."), never reaches the page: the documented JSON error answers it.
          expect([400, 404], where).toContain(res.status);
          expect(JSON.parse(res.body).error.request_id, where).toMatch(/^req_/);
        } else {
          expect(String(res.headers['content-type']), where).toMatch(/^text\/html/);
          expect(String(res.headers['content-security-policy']), where).toContain("default-src 'none'");
        }
        // Opening a link only reads, whatever it is: the order exists from the first Pay (StartPayment).
        expect(await snapshot(), `opening a link wrote rows: ${where}`).toBe(before);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(svc.internalErrors).toEqual([]);
  });

  it('the Connect protocol itself (GET messages, compression, sizes): no 5xx, the Connect error body, no row written', async () => {
    const arb = fc.record({
      get: fc.boolean(),
      encoding: fc.constantFrom('json', 'proto', 'xml', ''),
      base64: fc.constantFrom('0', '1', ''),
      compression: fc.constantFrom('gzip', 'br', 'zstd', 'identity', 'deflate', ''),
      message: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('!!!', '%00', 'eyJjaGVja291dElkIjoieCJ9', '{"checkoutId":"x"}')),
      bytes: fc.uint8Array({ maxLength: 64 }),
      contentType: fc.constantFrom('application/json', 'application/proto', 'application/connect+json', 'application/grpc-web+proto', 'text/plain'),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ get, encoding, base64, compression, message, bytes, contentType }) => {
        let request: Sent;
        if (get) {
          const params = [['connect', 'v1'], ['encoding', encoding], ['base64', base64], ['compression', compression], ['message', message]].filter(([, v]) => v !== '');
          request = { method: 'GET', url: `/checkout.v1.CheckoutService/GetCheckout?${params.map(([k, v]) => `${k}=${rawEncode(v!)}`).join('&')}`, headers: {} };
        } else {
          const headers: Record<string, string> = { 'content-type': contentType };
          if (compression) headers['content-encoding'] = compression;
          request = { method: 'POST', url: '/checkout.v1.CheckoutService/GetCheckout', headers, payload: Buffer.from(bytes) };
        }
        const before = await snapshot();
        const res = await send(request);
        const after = await snapshot();
        // The protocol answers a media type it does not speak with a bare 415 (the Connect specification's own rule);
        // gRPC-Web answers HTTP 200 with its status in a trailer frame. Everything else has the Connect error body.
        if (res.status === 415 && res.body === '') expect(after).toBe(before);
        else if (res.status >= 400) checkAnswer(request, res, true, before, after);
        else expect(res.status, `${request.method} ${request.url}`).toBeLessThan(500);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(svc.internalErrors).toEqual([]);
  });

  it('bounds a Connect request at 1 MiB, before and after decompression (a 50 MiB brotli bomb is refused unread)', async () => {
    const url = '/checkout.v1.CheckoutService/GetCheckout';
    const big = await send({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ checkoutId: 'a'.repeat(2 << 20) }) });
    expect(big.status).toBe(429);
    expect(JSON.parse(big.body)).toMatchObject({ code: 'resource_exhausted', message: expect.stringMatching(/readMaxBytes/) });
    const bomb = zlib.brotliCompressSync(Buffer.concat([Buffer.from('{"checkoutId":"'), Buffer.alloc(50 << 20, 97), Buffer.from('"}')]));
    expect(bomb.length).toBeLessThan(10_000);
    const unpacked = await send({ method: 'POST', url, headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, payload: bomb });
    expect(unpacked.status).toBe(429);
    expect(JSON.parse(unpacked.body).message).toMatch(/after decompression/);
  });
});
