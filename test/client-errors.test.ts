// Requests that never reach a route: an HTTP/1.1 request the parser refuses (oversized headers,
// bad syntax), a path that cannot be decoded, a path parameter over the router's limit, and the
// same on h2c. Each must answer the documented error body with the right status, on a real socket.
import http2 from 'node:http2';
import type { AddressInfo, Server } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../src/composition/core.ts';
import { buildGateway } from '../gateway/app.ts';
import { listenH1AndH2c } from '../gateway/listen.ts';
import { createTestDatabase, rowCounts, type TestDatabase } from './support/database.ts';
import { parseRawResponse, rawExchange, type RawResponse } from './support/raw-http.ts';

let db: TestDatabase;
let app: FastifyInstance;
let server: Server;
let port: number;
let secretKey: string;
const internalErrors: unknown[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const core = createCore({ knex: db.knex, apiBaseUrl: 'http://api.test', checkoutHost: 'http://pay.test', onInternalError: (err) => internalErrors.push(err) });
  app = await buildGateway({ routes: core.routes, publicUrl: 'http://api.test' });
  await app.ready();
  secretKey = (await core.createSandbox({ name: 'Client errors shop', settlementCurrency: 'EUR' }))!.test_secret_key;
  server = await listenH1AndH2c(app.server, core.routes, 0, '127.0.0.1');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  await app?.close();
  await db?.drop();
});

/** Asserts the documented error body, its request id equal to the Request-Id header; answers the error. */
function expectErrorBody(res: { status: number; headers: Readonly<Record<string, string | string[] | number | undefined>>; body: string }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ type: 'invalid_request_error', code, message: expect.any(String), request_id: expect.stringMatching(/^req_[0-9A-Za-z]{20}$/) });
  expect(res.headers['request-id']).toBe(body.error.request_id);
  return body.error;
}

async function h1(request: string): Promise<RawResponse> {
  const text = await rawExchange(port, request);
  const res = parseRawResponse(text);
  if (!res) throw new Error(`no HTTP response, got ${JSON.stringify(text.slice(0, 200))}`);
  return res;
}

describe('HTTP/1.1', () => {
  it.each(['/v1/orders/%', '/%zz', '/v1/orders/%zz?expand=x', '/c/%E0%A4%A', '/v1/webhook_endpoints/%ff'])('answers GET %s with 400 path_invalid', async (path) => {
    const res = await h1(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    const error = expectErrorBody(res, 400, 'path_invalid');
    expect(error.message).toMatch(/path/);
  });

  it('answers a POST with an undecodable path with 400 path_invalid, and writes nothing', async () => {
    const before = await rowCounts(db.knex);
    const body = '{"amount":100,"currency":"EUR","reference":"x"}';
    const res = await h1(
      `POST /v1/test_helpers/orders/%zz/simulate_transfer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expectErrorBody(res, 400, 'path_invalid');
    expect(await rowCounts(db.knex)).toEqual(before);
  });

  it('answers headers over 16 KiB with 431 headers_too_large', async () => {
    const res = await h1(`GET /v1/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`);
    const error = expectErrorBody(res, 431, 'headers_too_large');
    expect(error.message).toContain('16 KiB');
  });

  it('answers a request line over 16 KiB with 431 headers_too_large', async () => {
    const res = await h1(`GET /v1/orders?reference=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expectErrorBody(res, 431, 'headers_too_large');
  });

  it('answers an unparseable request with 400 request_malformed', async () => {
    const res = await h1('GET /healthz HTTP/1.1\r\nHo st: 127.0.0.1\r\n\r\n');
    expectErrorBody(res, 400, 'request_malformed');
  });

  it('answers a path id over 100 characters (past the router\'s limit) with 404 resource_missing, like any id that cannot be ours', async () => {
    const res = await h1(`GET /v1/orders/ord_${'a'.repeat(200)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secretKey}\r\nConnection: close\r\n\r\n`);
    const error = expectErrorBody(res, 404, 'resource_missing');
    expect(error.param).toBe('id');
    // Without a key, the key is judged first: nothing is said about the id.
    const anonymous = await h1(`GET /v1/orders/ord_${'a'.repeat(200)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(anonymous.status).toBe(401);
  });

  it('still serves ordinary requests, with a Request-Id', async () => {
    const res = await h1('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true });
  });
});

describe('HTTP/2 (h2c)', () => {
  let session: http2.ClientHttp2Session;
  beforeAll(() => {
    session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
  });
  afterAll(() => new Promise<void>((resolve) => session.close(() => resolve())));

  function request(path: string, extraHeaders: Record<string, string> = {}): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string; error?: NodeJS.ErrnoException }> {
    return new Promise((resolve) => {
      const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', ...extraHeaders });
      let status = 0;
      let headers: http2.IncomingHttpHeaders = {};
      let body = '';
      let error: NodeJS.ErrnoException | undefined;
      stream.on('response', (h) => {
        headers = h;
        status = Number(h[':status']);
      });
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (body += chunk));
      stream.on('error', (err: NodeJS.ErrnoException) => (error = err));
      stream.on('close', () => resolve({ status, headers, body, error }));
      stream.end('{}');
    });
  }

  it.each(['/v1/orders/%', '/%zz', '/checkout.v1.OrderService/%GetOrder'])('answers %s with 400 path_invalid', async (path) => {
    const res = await request(path);
    expectErrorBody({ status: res.status, headers: res.headers, body: res.body }, 400, 'path_invalid');
  });

  it('answers headers over 16 KiB with 431 headers_too_large', async () => {
    const res = await request('/checkout.v1.OrderService/GetOrder', { 'x-padding': 'a'.repeat(20_000) });
    expectErrorBody({ status: res.status, headers: res.headers, body: res.body }, 431, 'headers_too_large');
  });

  it('answers a path that is not a Connect method with 404 route_not_found (REST is served over HTTP/1.1)', async () => {
    const res = await request('/v1/orders');
    const error = expectErrorBody({ status: res.status, headers: res.headers, body: res.body }, 404, 'route_not_found');
    expect(error.message).toMatch(/HTTP\/1\.1/);
  });

  it('still serves Connect calls', async () => {
    const res = await request('/checkout.v1.OrderService/GetOrder', { 'connect-protocol-version': '1' });
    // No API key: the Connect error, not a gateway one.
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'unauthenticated' });
  });
});

describe('afterwards', () => {
  it('reported no internal errors', () => {
    expect(internalErrors).toEqual([]);
  });
});
