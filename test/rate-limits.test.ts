// API rate limits per key (token buckets in Postgres, shared by every instance), failed
// authentications per client address on every transport, and the checkout's card-testing limits per
// client address and per merchant, with the limits lowered by configuration.
import net, { type AddressInfo, type Server } from 'node:net';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport, createGrpcWebTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../src/composition/core.ts';
import { buildGateway } from '../gateway/app.ts';
import { listenH1AndH2c } from '../gateway/listen.ts';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { ErrorDetailSchema } from '../src/gen/checkout/v1/errors_pb.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';
import { tokenInPage } from './support/payments.ts';

describe('API rate limit per key', () => {
  let svc: TestService;
  let shop: SandboxCredentials;

  beforeAll(async () => {
    svc = await startTestService({ rateLimit: { perSecond: 1, burst: 5 } });
    shop = await svc.sandbox('Limited shop');
  });
  afterAll(async () => {
    await svc?.close();
  });

  const get = (key: string, app = svc.app) => app.inject({ method: 'GET', url: '/v1/orders?limit=1', headers: { authorization: `Bearer ${key}` } });

  it('answers 429 with Retry-After, RateLimit headers and the documented body once the bucket is empty', async () => {
    const started = Date.now();
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await get(shop.test_secret_key));
    const elapsedS = (Date.now() - started) / 1000;
    const ok = answers.filter((r) => r.statusCode === 200);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(ok.length + refused.length).toBe(20);
    // The burst, plus what one token per second can have added while the requests ran.
    expect(ok.length).toBeGreaterThanOrEqual(5);
    expect(ok.length).toBeLessThanOrEqual(5 + Math.ceil(elapsedS));
    expect(ok[0]!.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-remaining': '4' });
    const first = refused[0]!;
    expect(Number(first.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-remaining': '0' });
    expect(first.json()).toEqual({
      error: {
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        message: expect.stringMatching(/retry after \d+ s/),
        request_id: first.headers['request-id'],
      },
    });
  });

  it('carries the RateLimit headers on an error answered after authentication too', async () => {
    const other = await svc.sandbox('Missing shop');
    const res = await svc.app.inject({ method: 'GET', url: '/v1/orders/ord_aaaaaaaaaaaaaaaaaaaaaaaa', headers: { authorization: `Bearer ${other.test_secret_key}` } });
    expect(res.statusCode).toBe(404);
    expect(res.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-remaining': '4' });
  });

  it('counts per key: another key of the same merchant has its own bucket', async () => {
    const res = await get(shop.live_secret_key);
    expect(res.statusCode).toBe(200);
  });

  it('is shared by every instance: a second core over the same database sees the spent bucket', async () => {
    // One token per 1000 s: however slowly a busy machine runs these requests, the bucket cannot refill meanwhile.
    const slowly = { perSecond: 0.001, burst: 5 };
    const cores = [1, 2].map(() => createCore({ knex: svc.db.knex, apiBaseUrl: 'http://api.test', checkoutHost: 'http://pay.test', onInternalError: () => undefined, rateLimit: slowly }));
    const [firstApp, secondApp] = await Promise.all(cores.map((core) => buildGateway({ routes: core.routes, publicUrl: 'http://api.test' })));
    const other = await svc.sandbox('Shared shop');
    try {
      for (let i = 0; i < 5; i++) expect((await get(other.test_secret_key, firstApp)).statusCode).toBe(200);
      const fromSecond = await get(other.test_secret_key, secondApp);
      expect(fromSecond.statusCode).toBe(429);
    } finally {
      await Promise.all([firstApp!.close(), secondApp!.close()]);
    }
  });

  it('limits every authenticated method, writes included, and writes nothing when it refuses', async () => {
    const other = await svc.sandbox('Writer shop');
    const post = () =>
      svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${other.test_secret_key}`, 'content-type': 'application/json' }, payload: orderBody() });
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await post());
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused.length).toBeGreaterThan(0);
    const created = answers.filter((r) => r.statusCode === 201).length;
    const [row] = await svc.db.knex('orders').join('merchants', 'merchants.id', 'orders.merchant_id').where('merchants.name', 'Writer shop').count<{ count: string }[]>('* as count');
    expect(Number(row!.count)).toBe(created);
  });
});

describe('failed authentications per client address, on every transport', () => {
  let svc: TestService;
  let shop: SandboxCredentials;
  let server: Server;
  let port: number;
  /** How far the service's clock is ahead of the real one: the window ends when the test moves it. */
  let offsetMs = 0;
  const sessions: Http2SessionManager[] = [];

  beforeAll(async () => {
    // Ten failures per address in a minute of the service's clock.
    svc = await startTestService({ authFailures: { limit: 10, windowMs: 60_000 }, clock: { now: () => new Date(Date.now() + offsetMs) } });
    shop = await svc.sandbox('Guessed shop');
    server = await listenH1AndH2c(svc.app.server, svc.core.routes, 0, '127.0.0.1');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const session of sessions) session.abort();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await svc?.close();
  });

  const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  /** A key shaped like ours that nobody was given. */
  const randomKey = () => `sk_test_${Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => ALNUM[b % 62]).join('')}`;
  const rest = (authorization: string | undefined, remoteAddress: string) =>
    svc.app.inject({ method: 'GET', url: '/v1/orders?limit=1', remoteAddress, headers: authorization === undefined ? {} : { authorization } });
  /** Sends `count` requests, `parallel` at a time (a flood, as an attacker sends it). */
  async function flood<T>(count: number, parallel: number, send: (i: number) => Promise<T>): Promise<T[]> {
    const answers: T[] = [];
    for (let i = 0; i < count; i += parallel) answers.push(...(await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, (_, j) => send(i + j)))));
    return answers;
  }
  const failuresOf = async (address: string) => (await svc.db.knex('auth_failures').where({ address }).first())?.failures as number | undefined;

  it('REST: a few hundred bad keys from one address get 401 up to the limit, then 429 with Retry-After; another address goes on; the window ends', async () => {
    // Unknown keys and malformed ones alike, 50 at a time.
    const answers = await flood(300, 50, (i) => rest(i % 3 === 0 ? 'Bearer not-a-key' : `Bearer ${randomKey()}`, '127.0.5.1'));
    const unauthorized = answers.filter((r) => r.statusCode === 401);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(unauthorized).toHaveLength(10);
    expect(refused).toHaveLength(290);
    expect(refused[0]!.json().error).toEqual({
      type: 'rate_limit_error',
      code: 'too_many_authentication_failures',
      message: expect.stringMatching(/Too many failed authentications .* from your address; retry after \d+ s/),
      request_id: refused[0]!.headers['request-id'],
    });
    for (const r of refused) {
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    // The address is refused whatever it sends, its merchant's own key included: a valid key is no way round.
    expect((await rest(`Bearer ${shop.test_secret_key}`, '127.0.5.1')).statusCode).toBe(429);
    // Refused from memory: more of the flood neither looks the keys up nor writes a count.
    const counted = await failuresOf('127.0.5.1');
    expect(counted).toBeGreaterThan(10);
    expect((await flood(100, 50, () => rest(`Bearer ${randomKey()}`, '127.0.5.1'))).every((r) => r.statusCode === 429)).toBe(true);
    expect(await failuresOf('127.0.5.1')).toBe(counted);

    // Another address is not held by it: the merchant's key works, and a bad key there has its own count.
    const other = await rest(`Bearer ${shop.test_secret_key}`, '127.0.5.2');
    expect(other.statusCode).toBe(200);
    expect(other.headers['retry-after']).toBeUndefined();
    expect((await rest(`Bearer ${randomKey()}`, '127.0.5.2')).statusCode).toBe(401);
    // A request without a key is told so, and does not count: it guesses nothing.
    expect((await flood(30, 30, () => rest(undefined, '127.0.5.3'))).every((r) => r.statusCode === 401 && r.json().error.code === 'api_key_missing')).toBe(true);
    expect(await failuresOf('127.0.5.3')).toBeUndefined();

    // A minute later on the service's clock the window has ended: the address authenticates again, and counts afresh.
    offsetMs += 61_000;
    expect((await rest(`Bearer ${shop.test_secret_key}`, '127.0.5.1')).statusCode).toBe(200);
    expect((await rest(`Bearer ${randomKey()}`, '127.0.5.1')).statusCode).toBe(401);
    expect(await failuresOf('127.0.5.1')).toBe(1);
  });

  it('Connect, gRPC-Web and gRPC count into the same limit per address, and refuse with resource_exhausted and Retry-After', async () => {
    // Connect JSON over HTTP/1.1 (the Connect mount), from one address.
    const connect = (key: string, remoteAddress: string) =>
      svc.app.inject({ method: 'POST', url: '/checkout.v1.OrderService/ListOrders', remoteAddress, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, payload: {} });
    const answers = await flood(60, 20, () => connect(randomKey(), '127.0.6.1'));
    expect(answers.filter((r) => r.statusCode === 401)).toHaveLength(10);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(50);
    expect(refused[0]!.json()).toMatchObject({ code: 'resource_exhausted', message: expect.stringMatching(/Too many failed authentications/) });
    expect(JSON.stringify(refused[0]!.json().details)).toContain('too_many_authentication_failures');
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await connect(shop.test_secret_key, '127.0.6.2')).statusCode).toBe(200);

    // gRPC over h2c and gRPC-Web over HTTP/1.1, on a real socket from 127.0.0.1.
    const baseUrl = `http://127.0.0.1:${port}`;
    const session = new Http2SessionManager(baseUrl);
    sessions.push(session);
    const grpc = createClient(OrderService, createGrpcTransport({ baseUrl, sessionManager: session }));
    const grpcWeb = createClient(OrderService, createGrpcWebTransport({ baseUrl, httpVersion: '1.1' }));
    const outcome = async (call: Promise<unknown>) => {
      try {
        await call;
        return { code: 'ok' as const };
      } catch (err) {
        const e = ConnectError.from(err);
        return { code: Code[e.code], detail: e.findDetails(ErrorDetailSchema)[0]?.code, retryAfter: e.metadata.get('retry-after') };
      }
    };
    const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
    const viaGrpc = await flood(20, 10, () => outcome(grpc.listOrders({ limit: 1 }, bearer(randomKey()))));
    expect(viaGrpc.filter((o) => o.code === 'Unauthenticated')).toHaveLength(10);
    const grpcRefused = viaGrpc.filter((o) => o.code === 'ResourceExhausted');
    expect(grpcRefused).toHaveLength(10);
    expect(grpcRefused[0]).toMatchObject({ detail: 'too_many_authentication_failures' });
    expect(Number(grpcRefused[0]!.retryAfter)).toBeGreaterThanOrEqual(1);
    // The same address over gRPC-Web is the same client: refused, its good key included.
    expect(await outcome(grpcWeb.listOrders({ limit: 1 }, bearer(shop.test_secret_key)))).toMatchObject({ code: 'ResourceExhausted', detail: 'too_many_authentication_failures' });
    // gRPC from another loopback address goes on.
    const elsewhere = new Http2SessionManager(baseUrl, undefined, { createConnection: () => net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' }) });
    sessions.push(elsewhere);
    const fromElsewhere = createClient(OrderService, createGrpcTransport({ baseUrl, sessionManager: elsewhere }));
    expect(await outcome(fromElsewhere.listOrders({ limit: 1 }, bearer(shop.test_secret_key)))).toEqual({ code: 'ok' });
    expect(await outcome(fromElsewhere.listOrders({ limit: 1 }, bearer(randomKey())))).toMatchObject({ code: 'Unauthenticated' });
  });

  it('behind a trusted proxy (TRUST_PROXY), counts the client the proxy names, not the proxy', async () => {
    const { loadConfig } = await import('../src/composition/config.ts');
    const proxied = await buildGateway({ routes: svc.core.routes, publicUrl: 'http://api.test', trustProxy: loadConfig({ TRUST_PROXY: 'true' }).trustProxy });
    try {
      const viaProxy = (key: string, client: string) =>
        proxied.inject({ method: 'GET', url: '/v1/orders?limit=1', remoteAddress: '127.0.0.200', headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': client } });
      const answers = await flood(15, 15, () => viaProxy(randomKey(), '127.0.8.1'));
      expect(answers.filter((r) => r.statusCode === 401)).toHaveLength(10);
      expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(5);
      // Another client of the same proxy is not held back.
      expect((await viaProxy(shop.test_secret_key, '127.0.8.2')).statusCode).toBe(200);
      expect(await failuresOf('127.0.0.200')).toBeUndefined();
    } finally {
      await proxied.close();
    }
  });
});

describe('card-testing limits of the checkout', () => {
  let svc: TestService;

  beforeAll(async () => {
    // Ten points per client address and per merchant in a minute; a decline scores 4.
    svc = await startTestService({ velocity: { windowMs: 60_000, perClientAddress: 10, perMerchant: 10, declineWeight: 4 } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  async function newCheckout(shop: SandboxCredentials) {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' }, payload: orderBody() });
    const checkoutId = (res.json().id as string).slice(4);
    // The token as the customer's browser gets it: in the order's page.
    const page = await svc.app.inject({ method: 'GET', url: `/c/${checkoutId}` });
    return { checkoutId, token: tokenInPage(page.body) };
  }

  function cardOf(shop: SandboxCredentials, behaviour: string) {
    const found = shop.test_cards.find((c) => c.behaviour === behaviour)!;
    return { number: found.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Card Tester' };
  }

  async function submit(shop: SandboxCredentials, behaviour: string, remoteAddress: string, method: 'SubmitCardPayment' | 'SubmitWalletPayment' = 'SubmitCardPayment') {
    const { checkoutId, token } = await newCheckout(shop);
    return svc.app.inject({
      method: 'POST',
      url: `/checkout.v1.CheckoutService/${method}`,
      remoteAddress,
      headers: { 'content-type': 'application/json', 'checkout-token': token },
      payload: { checkoutId, submissionId: crypto.randomUUID(), ...(method === 'SubmitCardPayment' ? { card: cardOf(shop, behaviour) } : {}) },
    });
  }

  const attemptCount = async () => Number((await svc.db.knex('payment_attempts').count<{ count: string }[]>('* as count'))[0]!.count);

  it('stops one client address after a few declines across orders, with a clear error the page shows; others go on', async () => {
    const shop = await svc.sandbox('Address shop');
    const other = await svc.sandbox('Address shop 2');
    for (let i = 0; i < 2; i++) expect((await submit(shop, 'hard_decline', '127.0.0.2')).json().outcome.status).toBe('PAYMENT_STATUS_FAILED');
    // 2 declines = 8 points: one more submission fits (9), a third decline would not.
    expect((await submit(other, 'hard_decline', '127.0.0.2')).statusCode).toBe(200);
    const before = await attemptCount();
    const refused = await submit(shop, 'approved', '127.0.0.2');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'resource_exhausted', message: expect.stringMatching(/Too many payment attempts/) });
    expect(JSON.stringify(refused.json().details)).toContain('too_many_payment_attempts');
    expect(await attemptCount()).toBe(before);
    // The wallet is a payment method like the card, and another merchant's checkout is no way round.
    expect((await submit(other, 'approved', '127.0.0.2', 'SubmitWalletPayment')).statusCode).toBe(429);
    // Another address is not affected.
    expect((await submit(other, 'approved', '127.0.0.3')).json().outcome.status).toBe('PAYMENT_STATUS_SUCCEEDED');
  });

  it('stops one merchant being tested from many addresses; other merchants go on', async () => {
    const shop = await svc.sandbox('Merchant shop');
    const other = await svc.sandbox('Merchant shop 2');
    for (let i = 0; i < 2; i++) expect((await submit(shop, 'hard_decline', `127.0.1.${i + 1}`)).statusCode).toBe(200);
    // 2 declines = 8 points; two approved payments make 10, the limit.
    expect((await submit(shop, 'approved', '127.0.1.10')).statusCode).toBe(200);
    expect((await submit(shop, 'approved', '127.0.1.11')).statusCode).toBe(200);
    const refused = await submit(shop, 'approved', '127.0.1.13');
    expect(refused.statusCode).toBe(429);
    expect((await submit(other, 'approved', '127.0.1.12')).json().outcome.status).toBe('PAYMENT_STATUS_SUCCEEDED');
  });
});

describe('the client address behind a proxy (TRUST_PROXY)', () => {
  it('takes the hop the trusted proxy added, never the leftmost entry the client wrote', async () => {
    const { loadConfig } = await import('../src/composition/config.ts');
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(loadConfig({}).trustProxy).toBe(false);

    const svc = await startTestService();
    const app = await buildGateway({ routes: svc.core.routes, publicUrl: 'http://api.test', trustProxy: loadConfig({ TRUST_PROXY: 'true' }).trustProxy });
    try {
      const shop = await svc.sandbox('Proxied shop');
      const card = shop.test_cards.find((c) => c.behaviour === 'hard_decline')!;
      const submit = async (forwardedFor: string | undefined) => {
        const created = await app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' }, payload: orderBody() });
        const checkoutId = (created.json().id as string).slice(4);
        const token = tokenInPage((await app.inject({ method: 'GET', url: `/c/${checkoutId}` })).body);
        await app.inject({
          method: 'POST',
          url: '/checkout.v1.CheckoutService/SubmitCardPayment',
          remoteAddress: '127.0.0.200',
          headers: { 'content-type': 'application/json', 'checkout-token': token, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
          payload: { checkoutId, submissionId: crypto.randomUUID(), card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'X' } },
        });
        return (await svc.db.knex('payment_attempts').where({ order_id: created.json().id }).first()).client_address;
      };
      // The proxy at 127.0.0.200 appends the address it saw; what the client put before it is not trusted.
      expect(await submit('198.51.100.7, 127.0.0.10')).toBe('127.0.0.10');
      expect(await submit('127.0.0.11')).toBe('127.0.0.11');
      expect(await submit(undefined)).toBe('127.0.0.200');
    } finally {
      await app.close();
      await svc.close();
    }
  });
});

describe('card-testing limits under concurrency', () => {
  it.each([
    ['one client address', { perClientAddress: 10, perMerchant: 0 }, (i: number) => `127.0.2.${0 * i + 1}`],
    ['one merchant, many addresses', { perClientAddress: 0, perMerchant: 10 }, (i: number) => `127.0.3.${i + 1}`],
  ])('%s: 30 declined cards at once are held to the limit, as one at a time would be', async (_what, limits, addressOf) => {
    const svc = await startTestService({ velocity: { windowMs: 60_000, declineWeight: 4, ...limits } });
    try {
      const shop = await svc.sandbox('Burst shop');
      const card = shop.test_cards.find((c) => c.behaviour === 'hard_decline')!;
      const checkouts = [];
      for (let i = 0; i < 30; i++) {
        const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' }, payload: orderBody() });
        const checkoutId = (created.json().id as string).slice(4);
        const token = tokenInPage((await svc.app.inject({ method: 'GET', url: `/c/${checkoutId}` })).body);
        checkouts.push({ checkoutId, token });
      }
      const answers = await Promise.all(
        checkouts.map(({ checkoutId, token }, i) =>
          svc.app.inject({
            method: 'POST',
            url: '/checkout.v1.CheckoutService/SubmitCardPayment',
            remoteAddress: addressOf(i),
            headers: { 'content-type': 'application/json', 'checkout-token': token },
            payload: { checkoutId, submissionId: crypto.randomUUID(), card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'X' } },
          }),
        ),
      );
      // Ten points, a decline scoring four: three submissions fit (1, 5, 9 points before each), exactly as in sequence.
      expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(3);
      expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(27);
      const [row] = await svc.db.knex('payment_attempts').count<{ count: string }[]>('* as count');
      expect(Number(row!.count)).toBe(3);
    } finally {
      await svc.close();
    }
  });
});

describe('a payment link flooded by anonymous visitors', () => {
  let svc: TestService;
  let shop: SandboxCredentials;
  let proxied: Awaited<ReturnType<typeof buildGateway>>;

  beforeAll(async () => {
    svc = await startTestService();
    shop = await svc.sandbox('Flooded link shop');
    // The same core behind a gateway that trusts the proxy in front of it (TRUST_PROXY=true).
    proxied = await buildGateway({ routes: svc.core.routes, publicUrl: 'http://api.test', trustProxy: 1 });
  });
  afterAll(async () => {
    await proxied?.close();
    await svc?.close();
  });

  async function newLink(reference: string): Promise<{ id: string; url: string }> {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/links',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' },
      payload: { amount: 2500, currency: 'EUR', reference, type: 'collecting' },
    });
    expect(res.statusCode).toBe(201);
    return res.json();
  }

  /** Orders of the merchant and their order.created events. */
  async function written(): Promise<{ orders: number; events: number }> {
    const merchant = (await svc.db.knex('merchants').where({ name: 'Flooded link shop' }).first()).id as string;
    const [orders] = await svc.db.knex('orders').where({ merchant_id: merchant }).count<{ count: string }[]>('* as count');
    const [events] = await svc.db.knex('events').where({ merchant_id: merchant, type: 'order.created' }).count<{ count: string }[]>('* as count');
    return { orders: Number(orders!.count), events: Number(events!.count) };
  }

  /** Runs `count` requests, `batch` at a time. */
  async function flood<T>(count: number, send: (i: number) => Promise<T>, batch = 25): Promise<T[]> {
    const answers: T[] = [];
    for (let i = 0; i < count; i += batch) answers.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - i) }, (_, j) => send(i + j)))));
    return answers;
  }

  it('300 cookie-less opens from one address, and 300 from as many forwarded addresses, create no order and no event', async () => {
    const link = await newLink('flood-open');
    const path = new URL(link.url).pathname;
    const before = await written();

    const direct = await flood(300, () => svc.app.inject({ method: 'GET', url: path, remoteAddress: '127.0.4.1', headers: { 'accept-language': 'en' } }));
    // Through a trusted proxy, each open names another client: a crowd (or one client the proxy cannot tell apart).
    const forwarded = await flood(300, (i) =>
      proxied.inject({ method: 'GET', url: path, remoteAddress: '127.0.0.200', headers: { 'accept-language': 'en', 'x-forwarded-for': `10.9.${i >> 8}.${i & 255}` } }),
    );
    // The page's own Connect call, sent directly.
    const rpc = await flood(100, () =>
      svc.app.inject({ method: 'POST', url: '/checkout.v1.PaymentLinkPageService/OpenPaymentLink', remoteAddress: '127.0.4.2', headers: { 'content-type': 'application/json' }, payload: { suffix: path.slice(3) } }),
    );
    for (const res of [...direct, ...forwarded]) {
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Pay €25.00');
    }
    for (const res of rpc) expect(res.statusCode).toBe(200);
    expect(await written()).toEqual(before);
    expect(svc.internalErrors).toEqual([]);
  });

  /** A customer's first Pay: StartPayment, as the link page's script sends it. */
  const start = (app: typeof proxied, suffix: string, remoteAddress: string, forwardedFor?: string) =>
    app.inject({
      method: 'POST',
      url: '/checkout.v1.PaymentLinkPageService/StartPayment',
      remoteAddress,
      headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
      payload: { suffix, startId: crypto.randomUUID() },
    });

  it('300 starts to pay from one address create at most that address\'s 10, with order.created for each; the rest are told to wait', async () => {
    const link = await newLink('flood-start-one');
    const suffix = new URL(link.url).pathname.slice(3);
    const before = await written();
    const started = Date.now();
    const answers = await flood(300, () => start(svc.app, suffix, '127.0.5.1'));
    const elapsedHours = (Date.now() - started) / 3600_000;
    const made = (await written()).orders - before.orders;
    // The address's burst, plus what 10 an hour can have added meanwhile.
    expect(made).toBeGreaterThanOrEqual(1);
    expect(made).toBeLessThanOrEqual(10 + Math.ceil(10 * elapsedHours));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(made);
    expect((await written()).events - before.events).toBe(made);
    const refused = answers.filter((r) => r.statusCode !== 200);
    expect(refused).toHaveLength(300 - made);
    for (const r of refused) {
      expect(r.statusCode).toBe(429);
      expect(r.json()).toMatchObject({ code: 'resource_exhausted', details: [{ debug: { type: 'rate_limit_error', code: 'payment_link_busy' } }] });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // Another customer, elsewhere, still starts.
    expect((await start(svc.app, suffix, '127.0.5.2')).statusCode).toBe(200);
  });

  it('300 starts to pay from as many forwarded addresses create at most the link\'s 50 (and its refill); other links go on', async () => {
    const link = await newLink('flood-start-many');
    const suffix = new URL(link.url).pathname.slice(3);
    const before = await written();
    const started = Date.now();
    const answers = await flood(300, (i) => start(proxied, suffix, '127.0.0.200', `10.8.${i >> 8}.${i & 255}`));
    const elapsedS = (Date.now() - started) / 1000;
    const made = (await written()).orders - before.orders;
    // The link's burst, plus one every 6 seconds meanwhile.
    expect(made).toBeGreaterThanOrEqual(1);
    expect(made).toBeLessThanOrEqual(50 + Math.ceil(elapsedS / 6));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(made);
    expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(300 - made);
    expect((await written()).events - before.events).toBe(made);
    const other = await newLink('flood-start-other');
    expect((await start(proxied, new URL(other.url).pathname.slice(3), '127.0.0.200', '10.7.0.1')).statusCode).toBe(200);
    expect(svc.internalErrors).toEqual([]);
  });
});
