import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ConnectRouter } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CheckoutService, PaymentOutcomeSchema, PaymentStatus, type Checkout } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { ErrorDetailSchema } from '../../src/gen/checkout/v1/errors_pb.ts';
import { buildGateway } from '../app.ts';
import { CONTENT_SECURITY_POLICY } from './security-headers.ts';
import { sampleCheckout } from './sample-checkout.ts';

const ID = 'Xy7kP2mQ9rT4vW8zA1bC3dE5';

/** What the stub core answers GetCheckout with, per test; and what it was asked. */
let answer: () => Checkout;
const calls: { method: string; request: unknown; headers: Headers }[] = [];

function stubRoutes(router: ConnectRouter): void {
  router.service(CheckoutService, {
    getCheckout: (request, context) => {
      calls.push({ method: 'getCheckout', request, headers: context.requestHeader });
      return { checkout: answer() };
    },
    submitCardPayment: (request, context) => {
      calls.push({ method: 'submitCardPayment', request, headers: context.requestHeader });
      if (request.card?.number === '4000000000000002') {
        throw new ConnectError('The card number is invalid.', Code.InvalidArgument, undefined, [
          { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { type: 'card_error', code: 'card_number_invalid', param: 'card.number' }) },
        ]);
      }
      return { outcome: create(PaymentOutcomeSchema, { status: PaymentStatus.REQUIRES_AUTHENTICATION, challenge: { attemptId: 'att_1', hint: 'Test mode: enter 123456' } }) };
    },
  });
}

const pending = () => sampleCheckout({ checkoutId: ID, expiresAt: timestampFromDate(new Date(Date.now() + 86_400_000)) });

let app: FastifyInstance;

beforeAll(async () => {
  app = await buildGateway({ routes: stubRoutes, publicUrl: 'http://localhost' });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

beforeEach(() => {
  calls.length = 0;
  answer = pending;
});

function expectSecurityHeaders(headers: Record<string, unknown>): void {
  expect(headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
  expect(headers['content-security-policy']).not.toContain('unsafe-inline');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['x-frame-options']).toBe('DENY');
}

describe('GET /c/:checkoutId', () => {
  it('renders the checkout from GetCheckout, as uncacheable HTML with the security headers', async () => {
    const res = await app.inject({ method: 'GET', url: `/c/${ID}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['request-id']).toMatch(/^req_/);
    expectSecurityHeaders(res.headers);
    expect(res.body).toContain('<h1>Pay Bäckerei Müller</h1>');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.request).toMatchObject({ checkoutId: ID });
    expect(calls[0]!.headers.get('request-id')).toBe(res.headers['request-id']);
  });

  it('speaks the Accept-Language of the customer', async () => {
    const res = await app.inject({ method: 'GET', url: `/c/${ID}`, headers: { 'accept-language': 'de-CH,de;q=0.9' } });
    expect(res.body).toContain('<html lang="de-CH">');
    expect(res.body).toContain('<h1>Bäckerei Müller bezahlen</h1>');
    expect(res.headers.vary).toBe('Accept-Language');
  });

  it('answers an unknown checkout with a 404 page', async () => {
    answer = () => {
      throw new ConnectError('no such checkout', Code.NotFound);
    };
    const res = await app.inject({ method: 'GET', url: `/c/${ID}`, headers: { 'accept-language': 'de' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(res.headers);
    expect(res.body).toContain('<h1>Zahlung nicht gefunden</h1>');
  });

  it('answers a malformed id with a 404 page without asking the core', async () => {
    const res = await app.inject({ method: 'GET', url: '/c/%3Cscript%3Ealert(1)%3C%2Fscript%3E' });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('<script>alert');
    expect(calls).toHaveLength(0);
  });

  it('answers a failing core with an error page carrying the request id', async () => {
    answer = () => {
      throw new Error('database on fire');
    };
    const res = await app.inject({ method: 'GET', url: `/c/${ID}` });
    expect(res.statusCode).toBe(500);
    expectSecurityHeaders(res.headers);
    expect(res.body).toContain('<h1>Something went wrong</h1>');
    expect(res.body).toContain(`Reference for support: ${res.headers['request-id']}`);
    expect(res.body).not.toContain('database on fire');

    answer = () => {
      throw new ConnectError('down', Code.Unavailable);
    };
    expect((await app.inject({ method: 'GET', url: `/c/${ID}` })).statusCode).toBe(503);
  });

  it('answers other paths under /c with the HTML 404 page and the security headers', async () => {
    const res = await app.inject({ method: 'GET', url: '/c/a/b' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(res.headers);
  });

  it('leaves the REST API its JSON errors', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/nothing' });
    expect(res.json()).toMatchObject({ error: { code: 'route_not_found' } });
    expect(res.headers['content-security-policy']).toBeUndefined();
  });
});

describe('GET /c/assets/*', () => {
  async function linkedAssets(): Promise<string[]> {
    const page = await app.inject({ method: 'GET', url: `/c/${ID}` });
    return [...page.body.matchAll(/(?:src|href)="(\/c\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  }

  it('serves the linked script and stylesheet with a content hash, a year of cache and the security headers', async () => {
    const urls = await linkedAssets();
    expect(urls).toEqual([expect.stringMatching(/^\/c\/assets\/checkout-[0-9a-f]{12}\.css$/), expect.stringMatching(/^\/c\/assets\/checkout-[0-9a-f]{12}\.js$/)]);
    for (const url of urls) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(url.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['content-encoding']).toBeUndefined();
      expectSecurityHeaders(res.headers);
    }
  });

  it('serves brotli or gzip when the browser accepts them', async () => {
    const [, script] = await linkedAssets();
    const identity = (await app.inject({ method: 'GET', url: script! })).rawPayload;
    const br = await app.inject({ method: 'GET', url: script!, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(brotliDecompressSync(br.rawPayload).equals(identity)).toBe(true);
    const gz = await app.inject({ method: 'GET', url: script!, headers: { 'accept-encoding': 'gzip, br;q=0' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(identity)).toBe(true);
  });

  it('answers an unknown asset with 404', async () => {
    const res = await app.inject({ method: 'GET', url: '/c/assets/checkout-000000000000.js' });
    expect(res.statusCode).toBe(404);
  });
});

describe('the Connect mount, called as the page script calls it', () => {
  const call = (card: Record<string, unknown>) =>
    app.inject({
      method: 'POST',
      url: '/checkout.v1.CheckoutService/SubmitCardPayment',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', 'checkout-token': 'ctok_sample' },
      payload: JSON.stringify({ checkoutId: ID, submissionId: '0b6f1c1e-8a43-4a0e-9d43-4f1d5c1b2a11', card }),
    });

  it('takes proto3 JSON with the checkout-token header and answers the outcome with enum names', async () => {
    const res = await call({ number: '4242424242424242', expMonth: 12, expYear: 2030, cvc: '123', name: 'Ada Lovelace' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ outcome: { status: 'PAYMENT_STATUS_REQUIRES_AUTHENTICATION', challenge: { attemptId: 'att_1', hint: 'Test mode: enter 123456' } } });
    const [seen] = calls;
    expect(seen!.headers.get('checkout-token')).toBe('ctok_sample');
    expect(seen!.request).toMatchObject({ checkoutId: ID, card: { number: '4242424242424242', expMonth: 12, expYear: 2030, cvc: '123', name: 'Ada Lovelace' } });
  });

  it('answers errors with the code and the ErrorDetail readable as details[].debug', async () => {
    const res = await call({ number: '4000000000000002', expMonth: 12, expYear: 2030, cvc: '123', name: 'Ada' });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('invalid_argument');
    expect(body.details[0].debug).toMatchObject({ code: 'card_number_invalid' });
  });
});
