import { afterEach, describe, expect, it, vi } from 'vitest';
import { Checkout } from './checkout.ts';
import { ApiConnectionError, ApiError, IdempotencyError, InvalidRequestError, RateLimitError } from './errors.ts';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | 'network' | 'hang';

/** A client whose fetch plays `replies` in order and records every request; sleeps are recorded, never waited. */
function scripted(replies: Reply[], options: { maxRetries?: number; timeout?: number; random?: () => number } = {}) {
  const seen: Seen[] = [];
  const sleeps: number[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    seen.push({ method: init?.method ?? 'GET', url: String(input), headers: { ...(init?.headers as Record<string, string>) }, body: init?.body as string | undefined });
    const reply = replies.shift() ?? { status: 500 };
    if (reply === 'network') throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
    if (reply === 'hang') {
      return new Promise<Response>((_, reject) => init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    }
    const text = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    return new Response(text, { status: reply.status, headers: { 'request-id': `req_${seen.length}`, ...reply.headers } });
  };
  let n = 0;
  const checkout = new Checkout('sk_test_123', {
    baseUrl: 'http://api.test/',
    fetch,
    sleep: async (ms) => void sleeps.push(ms),
    random: options.random ?? (() => 0.5),
    idempotencyKey: () => `generated-${++n}`,
    ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
  return { checkout, seen, sleeps };
}

const order = { id: 'ord_1', object: 'order', amount: 2500 };
const apiError = (status: number, type: string, code: string) => ({ status, body: { error: { type, code, message: `${code}.`, request_id: `req_${code}` } } });
const params = { amount: 2500, currency: 'EUR', reference: 'INV-1' };

describe('the server SDK\'s transport', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('sends the key, JSON and a generated Idempotency-Key, the same on every retry', async () => {
    const { checkout, seen, sleeps } = scripted(['network', { status: 503, body: 'upstream down' }, { status: 201, body: order }]);
    await expect(checkout.orders.create(params)).resolves.toEqual(order);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.headers['idempotency-key']))).toEqual(new Set(['generated-1']));
    expect(seen[0]).toMatchObject({ method: 'POST', url: 'http://api.test/v1/orders', body: JSON.stringify(params) });
    expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer sk_test_123', 'content-type': 'application/json' });
    // Full jitter with random 0.5: half of 500 ms, then half of 1 s.
    expect(sleeps).toEqual([250, 500]);
  });

  it('uses the caller\'s idempotencyKey, and a new key per call otherwise', async () => {
    const { checkout, seen } = scripted([{ status: 201, body: order }, { status: 201, body: order }, { status: 201, body: order }]);
    await checkout.orders.create(params, { idempotencyKey: 'mine' });
    await checkout.orders.create(params);
    await checkout.customers.del('cus_1');
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['mine', 'generated-1', 'generated-2']);
  });

  it('retries GETs without a key', async () => {
    const { checkout, seen } = scripted([{ status: 500, body: apiError(500, 'api_error', 'internal_error').body }, { status: 200, body: order }]);
    await expect(checkout.orders.retrieve('ord/1')).resolves.toEqual(order);
    expect(seen.map((s) => s.url)).toEqual(['http://api.test/v1/orders/ord%2F1', 'http://api.test/v1/orders/ord%2F1']);
    expect(seen[0]!.headers['idempotency-key']).toBeUndefined();
  });

  it('retries a 409 concurrent_change, never another 4xx', async () => {
    const a = scripted([apiError(409, 'api_error', 'concurrent_change'), { status: 200, body: order }]);
    await expect(a.checkout.orders.capture('ord_1')).resolves.toEqual(order);
    expect(a.seen).toHaveLength(2);

    for (const reply of [apiError(400, 'invalid_request_error', 'amount_invalid'), apiError(409, 'invalid_request_error', 'order_not_capturable'), apiError(422, 'idempotency_error', 'idempotency_key_reused')]) {
      const b = scripted([reply, { status: 201, body: order }]);
      await expect(b.checkout.orders.create(params)).rejects.toMatchObject({ code: reply.body.error.code, requestId: `req_${reply.body.error.code}` });
      expect(b.seen).toHaveLength(1);
    }
    const c = scripted([apiError(422, 'idempotency_error', 'idempotency_key_reused')]);
    await expect(c.checkout.orders.create(params)).rejects.toBeInstanceOf(IdempotencyError);
  });

  it('gives up after maxRetries (2 by default) with the last error', async () => {
    const a = scripted([{ status: 500 }, { status: 502 }, apiError(503, 'api_error', 'service_unavailable'), { status: 201, body: order }]);
    const error = await a.checkout.orders.create(params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable', requestId: 'req_service_unavailable' });
    expect(a.seen).toHaveLength(3);
    expect(a.sleeps).toEqual([250, 500]);

    const b = scripted([{ status: 500 }, { status: 201, body: order }], { maxRetries: 0 });
    await expect(b.checkout.orders.create(params)).rejects.toBeInstanceOf(ApiError);
    const c = scripted([{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }, { status: 201, body: order }], { maxRetries: 1 });
    await expect(c.checkout.orders.create(params, { maxRetries: 4 })).resolves.toEqual(order);
    expect(c.seen).toHaveLength(5);
    expect(c.sleeps).toEqual([250, 500, 1000, 2000]);
  });

  it('honours Retry-After on a 429 rate limit, and does not wait out a long one', async () => {
    const a = scripted([{ ...apiError(429, 'rate_limit_error', 'rate_limit_exceeded'), headers: { 'retry-after': '3' } }, { status: 200, body: order }]);
    await expect(a.checkout.orders.retrieve('ord_1')).resolves.toEqual(order);
    expect(a.sleeps).toEqual([3000]);
    const b = scripted([{ ...apiError(429, 'rate_limit_error', 'rate_limit_exceeded'), headers: { 'retry-after': '3600' } }, { status: 200, body: order }]);
    await expect(b.checkout.orders.retrieve('ord_1')).rejects.toBeInstanceOf(RateLimitError);
    expect(b.seen).toHaveLength(1);
  });

  it('turns a timeout and a refused connection into ApiConnectionError, after retrying them', async () => {
    const a = scripted(['hang', 'hang'], { timeout: 5, maxRetries: 1 });
    const timeout = await a.checkout.orders.create(params).catch((e: unknown) => e);
    expect(timeout).toBeInstanceOf(ApiConnectionError);
    expect((timeout as Error).message).toMatch(/within 5 ms/);
    expect(a.seen.map((s) => s.headers['idempotency-key'])).toEqual(['generated-1', 'generated-1']);

    const b = scripted(['network', 'network', 'network']);
    const refused = await b.checkout.events.retrieve('evt_1').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiConnectionError);
    expect((refused as ApiConnectionError).status).toBeUndefined();
    expect(b.seen).toHaveLength(3);
  });

  it('maps a bad request to InvalidRequestError with its param', async () => {
    const { checkout } = scripted([{ status: 400, body: { error: { type: 'invalid_request_error', code: 'amount_invalid', message: 'amount must be positive.', param: 'amount', request_id: 'req_x' } } }]);
    await expect(checkout.orders.create({ ...params, amount: 0 })).rejects.toSatisfy((e) => e instanceof InvalidRequestError && e.param === 'amount' && e.requestId === 'req_x');
  });

  it('pages with starting_after = the last id, lazily, across every page', async () => {
    const page = (ids: string[], hasMore: boolean) => ({ status: 200, body: { object: 'list', url: '/v1/orders', has_more: hasMore, data: ids.map((id) => ({ id })) } });
    const { checkout, seen } = scripted([page(['o5', 'o4'], true), page(['o3', 'o2'], true), page(['o1'], false)]);
    const ids: string[] = [];
    for await (const o of checkout.orders.list({ limit: 2, reference: 'R' })) ids.push(o.id);
    expect(ids).toEqual(['o5', 'o4', 'o3', 'o2', 'o1']);
    expect(seen.map((s) => s.url)).toEqual([
      'http://api.test/v1/orders?limit=2&reference=R',
      'http://api.test/v1/orders?limit=2&reference=R&starting_after=o4',
      'http://api.test/v1/orders?limit=2&reference=R&starting_after=o2',
    ]);

    const b = scripted([page(['o2', 'o1'], true)]);
    const first = await b.checkout.orders.list({ limit: 2 });
    expect(first).toMatchObject({ object: 'list', has_more: true, data: [{ id: 'o2' }, { id: 'o1' }] });
    expect(b.seen).toHaveLength(1);
  });

  it('pages a payout\'s items by the item id', async () => {
    const page = (ids: string[], hasMore: boolean) => ({ status: 200, body: { object: 'list', url: '/v1/payouts/po_1/items', has_more: hasMore, data: ids.map((id) => ({ id })) } });
    const { checkout, seen } = scripted([page(['1', '2'], true), page(['3'], false)]);
    expect((await checkout.payouts.listItems('po_1', { limit: 2 }).toArray()).map((i) => i.id)).toEqual(['1', '2', '3']);
    expect(seen.map((s) => s.url)).toEqual(['http://api.test/v1/payouts/po_1/items?limit=2', 'http://api.test/v1/payouts/po_1/items?limit=2&starting_after=2']);
  });

  it('makes a UUID Idempotency-Key itself, from node:crypto where there is no global crypto.randomUUID (Node 18)', async () => {
    const keys: (string | undefined)[] = [];
    const fetch = async (_input: string | URL | Request, init?: RequestInit) => {
      keys.push((init?.headers as Record<string, string>)['idempotency-key']);
      return new Response(JSON.stringify(order), { status: 201 });
    };
    const checkout = new Checkout('sk_test_123', { baseUrl: 'http://api.test', fetch });
    await checkout.orders.create(params);
    vi.stubGlobal('crypto', undefined);
    await checkout.orders.create(params);
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('refuses to start without a key or a base URL', () => {
    expect(() => new Checkout('', { baseUrl: 'http://x' })).toThrow(/secret key/);
    expect(() => new Checkout('sk_test_1', { baseUrl: 'api.example' })).toThrow(/baseUrl/);
  });

  it('refuses a base URL with a user or password in it, and names neither in its message', async () => {
    for (const baseUrl of ['http://user:s3cret@api.test', 'https://user@api.test/v1', 'http://:s3cret@api.test']) {
      let error: unknown;
      try {
        new Checkout('sk_test_1', { baseUrl, fetch: async () => new Response('{}') });
      } catch (err) {
        error = err;
      }
      expect(error, baseUrl).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/refuses a baseUrl with a user or password/);
      expect((error as Error).message).not.toMatch(/s3cret|user@/);
    }
  });
});
