/**
 * Webhook delivery end to end, against the real Postgres and NATS JetStream: the service runs in
 * this process (startService, own database and stream, short retry schedule), receivers are real
 * node:http servers on 127.0.0.1, and what they get is checked with the merchant SDK's verifier.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { PostgresWebhookDeliveryQueue } from '../src/adapters/postgres/postgres-webhook-delivery-queue.ts';
import { verifyWebhook, WebhookVerificationError } from '../sdk/index.ts';
import { startOwnNatsServer } from './support/nats-server.ts';
import {
  api,
  createEndpoint,
  createOrder,
  payOrder,
  pool,
  Receiver,
  serviceEnv,
  startHarness,
  type EndpointJson,
  type Harness,
  type ReceivedRequest,
} from './support/webhooks.ts';
import { sleep, waitFor } from './support/wait.ts';

// ---------------------------------------------------------------------------
// Helpers

let h: Harness;
let cleanups: (() => Promise<unknown>)[] = [];
/** Process warnings (the service runs in this process): a listener leak shows up as MaxListenersExceededWarning. */
const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);

async function receiver(...args: Parameters<typeof Receiver.start>): Promise<Receiver> {
  const r = await Receiver.start(...args);
  cleanups.push(() => r.close());
  return r;
}

/** The reason a verification failed, or 'ok'. */
function verdict(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
}

/** The v1 parts of a Checkout-Signature header. */
function v1Parts(header: string): string[] {
  return header
    .split(',')
    .filter((p) => p.startsWith('v1='))
    .map((p) => p.slice(3));
}

function timestampOf(header: string): number {
  return Number(/(?:^|,)t=(\d+)/.exec(header)?.[1]);
}

interface AttemptJson {
  id: string;
  event_id: string;
  endpoint_id: string;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string;
}

async function attemptsOf(key: string, eventId: string): Promise<AttemptJson[]> {
  const res = await api<{ data: AttemptJson[] }>(h.base, key, 'GET', `/v1/events/${eventId}/deliveries`);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.data;
}

/** The event row of one order and type. */
async function eventOf(orderId: string, type: string): Promise<{ id: string; created_at: Date; sequence: number }> {
  return waitFor(`${type} of ${orderId}`, () => h.db.knex('events').where({ order_id: orderId, type }).first(), (row) => row !== undefined);
}

async function deliveryRows(endpointId: string, harness = h): Promise<{ event_id: string; status: string; attempt_count: number }[]> {
  return harness.db.knex('webhook_deliveries').where({ endpoint_id: endpointId }).select('event_id', 'status', 'attempt_count').orderBy('id');
}

/** Creates an order, pays it, and answers the order and its order.paid event id. */
async function paidOrder(key: string, reference = `INV-${Math.random().toString(36).slice(2, 8)}`) {
  const order = await createOrder(h.base, key, { reference });
  const paid = await payOrder(h.base, key, order.id);
  const event = await eventOf(order.id, 'order.paid');
  return { order, paid, eventId: event.id, event };
}

beforeAll(async () => {
  process.on('warning', onWarning);
  h = await startHarness();
});

afterEach(async () => {
  const pending = cleanups.reverse();
  cleanups = [];
  for (const cleanup of pending) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  process.off('warning', onWarning);
  await h?.close();
});

// ---------------------------------------------------------------------------

describe('delivery (service in process, real Postgres and JetStream, real HTTP receivers)', () => {
  test('a paid order is delivered once, signed, with the documented envelope; order.created is not sent to an order.paid endpoint; the attempt is logged', async () => {
    const shop = await h.merchant();
    const r = await receiver();
    const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url('/hooks/checkout'), ['order.paid']);
    expect(endpoint).toMatchObject({ object: 'webhook_endpoint', url: r.url('/hooks/checkout'), enabled_events: ['order.paid'], status: 'enabled', disabled_reason: null, is_default: false, livemode: false });
    expect(endpoint.id).toMatch(/^we_/);
    expect(endpoint.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);

    const { order, paid, eventId, event } = await paidOrder(shop.test_secret_key, 'INV-WH-1');
    expect(paid).toMatchObject({ status: 'paid', method: 'bank_transfer' });
    await waitFor('the order.paid delivery', () => r.requests.length, (n) => n >= 1);
    await waitFor('the delivery to be settled', () => deliveryRows(endpoint.id), (rows) => rows.every((row) => row.status !== 'pending'));
    await sleep(400); // a second request (a duplicate, or order.created) would come within this

    expect(r.requests).toHaveLength(1);
    const [req] = r.requests as [ReceivedRequest];
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hooks/checkout');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['checkout-event-id']).toBe(eventId);
    expect(v1Parts(req.signature)).toHaveLength(1);

    const verified = verifyWebhook(req.raw, req.signature, endpoint.secret);
    expect(verified).toEqual({
      type: 'order.paid',
      id: eventId,
      created: event.created_at.toISOString(),
      livemode: false,
      sequence: 2,
      data: { id: order.id, reference: 'INV-WH-1', amount: 2500, currency: 'EUR', method: 'bank_transfer', settlement: paid.settlement },
    });
    expect(paid.settlement).toEqual({ currency: 'EUR', amount: expect.any(Number) });
    // Compact JSON, the envelope's fields in the documented order.
    expect(req.raw.toString('utf8')).toBe(JSON.stringify(verified));
    expect(Object.keys(verified)).toEqual(['type', 'id', 'created', 'livemode', 'sequence', 'data']);
    // Signed "now": the timestamp is the time of the attempt.
    expect(Math.abs(timestampOf(req.signature) - Math.floor(req.at / 1000))).toBeLessThanOrEqual(2);

    // order.created happened (and was consumed before order.paid) but this endpoint never had it queued.
    const created = await eventOf(order.id, 'order.created');
    expect(await deliveryRows(endpoint.id)).toEqual([{ event_id: eventId, status: 'succeeded', attempt_count: 1 }]);
    expect(await attemptsOf(shop.test_secret_key, created.id)).toEqual([]);

    const attempts = await attemptsOf(shop.test_secret_key, eventId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ event_id: eventId, endpoint_id: endpoint.id, status_code: 200, error: null });
    expect(attempts[0]!.id).toMatch(/^wda_/);
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(0);
  });

  test('500, 500, then 200: retried with the same event id and the same bytes, three attempts logged, growing gaps', async () => {
    const shop = await h.merchant();
    const r = await receiver((req) => (req.nth < 2 ? { status: 500, body: `boom ${req.nth}` } : { status: 200, body: 'thanks' }));
    const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url(), ['order.paid']);
    const { eventId } = await paidOrder(shop.test_secret_key);

    await waitFor('three attempts', () => r.requests.length, (n) => n >= 3, 10_000);
    await waitFor('the delivery to succeed', () => deliveryRows(endpoint.id), (rows) => rows[0]?.status === 'succeeded');
    await sleep(1500); // past the cap of the retry schedule: a wrongly rescheduled delivery would show up
    expect(r.requests).toHaveLength(3);

    const [a, b, c] = r.requests as [ReceivedRequest, ReceivedRequest, ReceivedRequest];
    for (const req of [a, b, c]) {
      expect(req.body.id).toBe(eventId);
      expect(req.headers['checkout-event-id']).toBe(eventId);
      expect(verdict(() => verifyWebhook(req.raw, req.signature, endpoint.secret))).toBe('ok');
    }
    expect(b.raw.equals(a.raw)).toBe(true);
    expect(c.raw.equals(a.raw)).toBe(true);

    const attempts = await attemptsOf(shop.test_secret_key, eventId);
    expect(attempts.map((x) => x.status_code)).toEqual([500, 500, 200]);
    expect(attempts.map((x) => x.response_excerpt)).toEqual(['boom 0', 'boom 1', 'thanks']);
    expect(attempts.every((x) => x.error === null)).toBe(true);
    expect(await deliveryRows(endpoint.id)).toEqual([{ event_id: eventId, status: 'succeeded', attempt_count: 3 }]);

    // base 200 ms ±25 %, then 400 ms ±25 %: the gaps grow.
    const gap1 = b.hr - a.hr;
    const gap2 = c.hr - b.hr;
    expect(gap1).toBeGreaterThanOrEqual(140);
    expect(gap1).toBeLessThan(1000);
    expect(gap2).toBeGreaterThanOrEqual(290);
    expect(gap2).toBeGreaterThan(gap1);
  });

  test('the attempt log keeps at most the first 1024 bytes of the answer, cut on a character boundary; NUL and invalid bytes do not stop it being recorded', async () => {
    const shop = await h.merchant();
    // 3 + 3000 bytes: "ok", a NUL (Postgres text cannot hold it), then 1000 three-byte characters.
    const r = await receiver(() => ({ status: 200, body: `ok\0${'€'.repeat(1000)}` }));
    const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url(), ['order.paid']);
    const { eventId } = await paidOrder(shop.test_secret_key);
    await waitFor('the delivery to succeed', () => deliveryRows(endpoint.id), (rows) => rows[0]?.status === 'succeeded');
    const [attempt] = await attemptsOf(shop.test_secret_key, eventId);
    expect(attempt).toMatchObject({ status_code: 200, error: null });
    // The NUL became U+FFFD (3 bytes), so one more € than the raw cut had room for went: 5 + 339 × 3 = 1022 bytes.
    expect(attempt!.response_excerpt).toBe(`ok\uFFFD${'€'.repeat(339)}`);
    expect(Buffer.byteLength(attempt!.response_excerpt, 'utf8')).toBeLessThanOrEqual(1024);
  });

  test('an endpoint that does not answer within the timeout: the attempt is logged as a timeout error and retried', async () => {
    const shop = await h.merchant();
    const r = await receiver((req) => (req.nth === 0 ? 'hang' : { status: 204 }));
    const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url(), ['order.paid']);
    const { eventId } = await paidOrder(shop.test_secret_key);

    await waitFor('the retry after the timeout', () => r.requests.length, (n) => n >= 2, 10_000);
    await waitFor('the delivery to succeed', () => deliveryRows(endpoint.id), (rows) => rows[0]?.status === 'succeeded');
    const [first, second] = r.requests as [ReceivedRequest, ReceivedRequest];
    expect(second.raw.equals(first.raw)).toBe(true);
    // The sender gave up on the hanging request itself (closed the connection) after about WEBHOOK_TIMEOUT_MS.
    expect(first.answered).toBeUndefined();
    expect(first.abortedAt).toBeDefined();
    expect(first.abortedAt! - first.hr).toBeGreaterThanOrEqual(900);
    expect(first.abortedAt! - first.hr).toBeLessThan(2000);
    // Then the first retry delay (200 ms ±25 %).
    expect(second.hr - first.abortedAt!).toBeGreaterThanOrEqual(120);

    const attempts = await attemptsOf(shop.test_secret_key, eventId);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ status_code: null, response_excerpt: '' });
    expect(attempts[0]!.error).toMatch(/timed out after 1000 ms/);
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(950);
    expect(attempts[1]).toMatchObject({ status_code: 204, error: null });
  });

  test('the SDK verifier rejects a real delivery that was tampered with, checked with the wrong secret, or replayed after 301 s', async () => {
    const shop = await h.merchant();
    const r = await receiver();
    const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url(), ['order.paid']);
    const other = await createEndpoint(h.base, shop.test_secret_key, 'http://127.0.0.1:9/unused', ['order.failed']);
    await paidOrder(shop.test_secret_key);
    const [req] = (await waitFor('a delivery', () => r.requests, (list) => list.length >= 1)) as [ReceivedRequest];
    const raw = req.raw;
    const header = req.signature;
    const t = timestampOf(header);
    const at = (seconds: number) => ({ now: () => seconds * 1000 });

    expect(verdict(() => verifyWebhook(raw, header, endpoint.secret))).toBe('ok');
    expect(verdict(() => verifyWebhook(raw.toString('utf8'), header, endpoint.secret))).toBe('ok');

    // Tampered body: the amount changed, or one byte more.
    const text = raw.toString('utf8');
    expect(text).toContain('"amount":2500');
    expect(verdict(() => verifyWebhook(text.replace('"amount":2500', '"amount":2501'), header, endpoint.secret))).toBe('signature_mismatch');
    expect(verdict(() => verifyWebhook(Buffer.concat([raw, Buffer.from(' ')]), header, endpoint.secret))).toBe('signature_mismatch');
    // Re-serialized with indentation (what a JSON body parser followed by stringify does).
    expect(verdict(() => verifyWebhook(JSON.stringify(JSON.parse(text), null, 2), header, endpoint.secret))).toBe('signature_mismatch');
    // Tampered timestamp: the signature covers it.
    expect(verdict(() => verifyWebhook(raw, header.replace(`t=${t}`, `t=${t + 1}`), endpoint.secret))).toBe('signature_mismatch');

    // Wrong secret: another endpoint's real secret, the sandbox's default secret, a made-up one.
    expect(verdict(() => verifyWebhook(raw, header, other.secret))).toBe('signature_mismatch');
    expect(verdict(() => verifyWebhook(raw, header, shop.webhook_secret))).toBe('signature_mismatch');
    expect(verdict(() => verifyWebhook(raw, header, `whsec_${'x'.repeat(32)}`))).toBe('signature_mismatch');
    // ...though the right one among several passes.
    expect(verdict(() => verifyWebhook(raw, header, [other.secret, endpoint.secret]))).toBe('ok');

    // Replay: the same request 301 s later is refused; within 300 s it is not.
    expect(verdict(() => verifyWebhook(raw, header, endpoint.secret, at(t + 301)))).toBe('timestamp_outside_tolerance');
    expect(verdict(() => verifyWebhook(raw, header, endpoint.secret, at(t + 300)))).toBe('timestamp_outside_tolerance');
    expect(verdict(() => verifyWebhook(raw, header, endpoint.secret, at(t + 299)))).toBe('ok');
    expect(verdict(() => verifyWebhook(raw, header, endpoint.secret, at(t - 301)))).toBe('timestamp_outside_tolerance');

    // Header missing or mangled.
    expect(verdict(() => verifyWebhook(raw, undefined, endpoint.secret))).toBe('header_missing');
    expect(verdict(() => verifyWebhook(raw, header.replace(/v1=/g, 'v0='), endpoint.secret))).toBe('header_malformed');
  });
});

describe('secrets', () => {
  test('rotate_secret: the next delivery carries a v1 part per secret and verifies with the new and with the old one; after the overlap only the new one signs', async () => {
    const shop = await h.merchant();
    const r = await receiver();
    const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url(), ['order.paid']);
    const oldSecret = endpoint.secret;

    await paidOrder(shop.test_secret_key);
    const before = (await waitFor('the delivery before the rotation', () => r.requests, (list) => list.length >= 1))[0]!;
    expect(v1Parts(before.signature)).toHaveLength(1);

    const rotatedAt = Date.now();
    const rotated = await api<EndpointJson & { secret: string; old_secret_expires_at: string }>(h.base, shop.test_secret_key, 'POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { overlap_seconds: 1 });
    expect(rotated.status, JSON.stringify(rotated.json)).toBe(200);
    const newSecret = rotated.json.secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    const expiresAt = new Date(rotated.json.old_secret_expires_at).getTime();
    expect(expiresAt - rotatedAt).toBeGreaterThan(500);
    expect(expiresAt - rotatedAt).toBeLessThan(2000);

    // Within the overlap: both secrets sign, newest first.
    await paidOrder(shop.test_secret_key);
    const during = (await waitFor('the delivery during the overlap', () => r.requests, (list) => list.length >= 2))[1]!;
    expect(during.at).toBeLessThan(expiresAt);
    const parts = v1Parts(during.signature);
    expect(parts).toHaveLength(2);
    const t = timestampOf(during.signature);
    const hmac = (secret: string) => createHmac('sha256', secret).update(`${t}.`).update(during.raw).digest('hex');
    expect(parts).toEqual([hmac(newSecret), hmac(oldSecret)]);
    expect(verdict(() => verifyWebhook(during.raw, during.signature, newSecret))).toBe('ok');
    expect(verdict(() => verifyWebhook(during.raw, during.signature, oldSecret))).toBe('ok');

    // After the overlap: the old secret no longer verifies.
    await sleep(Math.max(0, expiresAt - Date.now()) + 200);
    await paidOrder(shop.test_secret_key);
    const after = (await waitFor('the delivery after the overlap', () => r.requests, (list) => list.length >= 3))[2]!;
    expect(v1Parts(after.signature)).toHaveLength(1);
    expect(verdict(() => verifyWebhook(after.raw, after.signature, newSecret))).toBe('ok');
    expect(verdict(() => verifyWebhook(after.raw, after.signature, oldSecret))).toBe('signature_mismatch');

    // The overlap is bounded.
    for (const overlap of [-1, 7 * 24 * 3600 + 1]) {
      const bad = await api<{ error: { code: string } }>(h.base, shop.test_secret_key, 'POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { overlap_seconds: overlap });
      expect(bad.status).toBe(400);
      expect(bad.json.error.code).toBe('overlap_invalid');
    }
  });
});

describe('isolation', () => {
  test.each(['hangs', 'is down'] as const)(
    'an endpoint that %s with 300 queued events does not hold up another endpoint of the same merchant',
    async (failure) => {
      const shop = await h.merchant();
      const fast = await receiver();
      let slowUrl: string;
      let slow: Receiver | undefined;
      if (failure === 'hangs') {
        slow = await receiver(() => 'hang');
        slowUrl = slow.url();
      } else {
        const gone = await Receiver.start();
        slowUrl = gone.url();
        await gone.close(); // nothing listens there any more: connection refused
      }
      const a = await createEndpoint(h.base, shop.test_secret_key, slowUrl, ['order.created']);
      const b = await createEndpoint(h.base, shop.test_secret_key, fast.url(), ['order.created']);
      // However the test ends, A's retries must not go on loading the shared dispatcher.
      cleanups.push(() => api(h.base, shop.test_secret_key, 'DELETE', `/v1/webhook_endpoints/${a.id}`));

      const started = Date.now();
      const orders = await pool(300, 20, (i) => createOrder(h.base, shop.test_secret_key, { reference: `ISO-${i}` }));
      const createdAllAt = Date.now();
      const events = await waitFor('300 order.created events', () => h.db.knex('events').whereIn('order_id', orders.map((o) => o.id)).select('id', 'created_at'), (rows) => rows.length === 300);

      await waitFor('B to receive all 300 events', () => fast.acceptedIds().size, (n) => n === 300, 15_000);
      const doneAt = Date.now();
      expect(new Set(fast.ids())).toEqual(new Set(events.map((e) => e.id)));
      await waitFor("B's 300 deliveries recorded as succeeded", () => deliveryRows(b.id), (rows) => rows.length === 300 && rows.every((row) => row.status === 'succeeded'));

      // Latency per event on B, from the event's commit to its arrival.
      const createdOf = new Map(events.map((e) => [e.id, new Date(e.created_at).getTime()]));
      const latencies = fast.requests.map((req) => req.at - createdOf.get(req.body.id)!).sort((x, y) => x - y);
      const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!;
      const aTries = Number((await h.db.knex('webhook_delivery_attempts').where({ endpoint_id: a.id }).count<{ n: string }[]>('* as n'))[0]!.n);
      const report = `B: all 300 within ${doneAt - createdAllAt} ms of the last order (creating them took ${createdAllAt - started} ms); latency p50 ${latencies[149]} ms, p99 ${p99} ms, max ${latencies.at(-1)} ms; A: ${aTries} failed attempts, ${slow?.maxOpen ?? 0} at most at once`;
      console.info(`[isolation, A ${failure}] ${report}`);
      // About 1 s on an idle machine; the bounds leave room for a loaded one (tests run two files at once).
      // B stuck behind A would take A's backlog in 1 s timeouts, 8 at a time: tens of seconds.
      expect(doneAt - createdAllAt, report).toBeLessThan(8000);
      expect(p99, report).toBeLessThan(7000);

      // Meanwhile A is failing: nothing succeeded, the attempts are errors, the backlog waits.
      const aRows = await deliveryRows(a.id);
      expect(aRows).toHaveLength(300);
      expect(aRows.filter((row) => row.status === 'succeeded')).toEqual([]);
      const aAttempts = await h.db.knex('webhook_delivery_attempts').where({ endpoint_id: a.id }).select('status_code', 'error');
      expect(aAttempts.length).toBeGreaterThan(0);
      expect(aAttempts.every((x: { status_code: number | null; error: string | null }) => x.status_code === null && x.error !== null)).toBe(true);
      if (slow) {
        // A hanging endpoint holds at most perEndpoint (8) deliveries at once.
        expect(slow.requests.length).toBeGreaterThan(0);
        expect(slow.maxOpen).toBeLessThanOrEqual(8);
        expect(slow.requests.every((req) => req.answered === undefined)).toBe(true);
      } else {
        expect(aAttempts.some((x: { error: string }) => /ECONNREFUSED|connect/i.test(x.error))).toBe(true);
      }
      // 600 deliveries over kept-alive connections did not leave a listener behind per request.
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
      // Deleting A gives up its backlog, including the attempts in flight when it goes (they end within the timeout).
      expect((await api(h.base, shop.test_secret_key, 'DELETE', `/v1/webhook_endpoints/${a.id}`)).status).toBe(200);
      await sleep(1500);
      const left = await deliveryRows(a.id);
      expect(left.filter((row) => row.status !== 'failed')).toEqual([]);
    },
    60_000,
  );
});

describe('event log API', () => {
  test('GET /v1/events filters by type, order_id and reference, newest first, with cursor pagination; other merchants and modes get 404', async () => {
    const shop = await h.merchant();
    const r = await receiver();
    await createEndpoint(h.base, shop.test_secret_key, r.url(), ['*']);
    const key = shop.test_secret_key;
    const o1 = await createOrder(h.base, key, { reference: 'LOG-A' });
    await sleep(5);
    const o2 = await createOrder(h.base, key, { reference: 'LOG-B' });
    await sleep(5);
    const o3 = await createOrder(h.base, key, { reference: 'LOG-A' });
    await sleep(5);
    await payOrder(h.base, key, o2.id);
    await waitFor('4 deliveries', () => r.acceptedIds().size, (n) => n === 4);
    const ids = {
      c1: (await eventOf(o1.id, 'order.created')).id,
      c2: (await eventOf(o2.id, 'order.created')).id,
      c3: (await eventOf(o3.id, 'order.created')).id,
      p2: (await eventOf(o2.id, 'order.paid')).id,
    };
    type EventList = { object: string; has_more: boolean; data: { id: string; object: string; type: string; order_id: string; reference: string; sequence: number; livemode: boolean; created: string; data: Record<string, unknown> }[] };
    const list = async (query: string) => {
      const res = await api<EventList>(h.base, key, 'GET', `/v1/events${query}`);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json;
    };

    const all = await list('');
    expect(all.data.map((e) => e.id)).toEqual([ids.p2, ids.c3, ids.c2, ids.c1]);
    expect(all.has_more).toBe(false);
    expect(all.data[0]).toMatchObject({ object: 'event', type: 'order.paid', order_id: o2.id, reference: 'LOG-B', sequence: 2, livemode: false, data: { id: o2.id, method: 'bank_transfer' } });
    // The log shows what was delivered: same id, created and data as the webhook body.
    const delivered = r.requests.find((x) => x.body.id === ids.p2)!.body;
    expect({ created: all.data[0]!.created, data: all.data[0]!.data }).toEqual({ created: delivered.created, data: delivered.data });

    expect((await list('?type=order.paid')).data.map((e) => e.id)).toEqual([ids.p2]);
    expect((await list('?type=order.created')).data.map((e) => e.id)).toEqual([ids.c3, ids.c2, ids.c1]);
    expect((await list(`?order_id=${o2.id}`)).data.map((e) => e.id)).toEqual([ids.p2, ids.c2]);
    expect((await list('?reference=LOG-A')).data.map((e) => e.id)).toEqual([ids.c3, ids.c1]);
    expect((await list(`?reference=LOG-A&type=order.paid`)).data).toEqual([]);

    // Pagination: limit 3, then after the last one.
    const page1 = await list('?limit=3');
    expect(page1.data.map((e) => e.id)).toEqual([ids.p2, ids.c3, ids.c2]);
    expect(page1.has_more).toBe(true);
    const page2 = await list(`?limit=3&starting_after=${page1.data.at(-1)!.id}`);
    expect(page2.data.map((e) => e.id)).toEqual([ids.c1]);
    expect(page2.has_more).toBe(false);
    const typed = await list(`?type=order.created&limit=1&starting_after=${ids.c3}`);
    expect(typed.data.map((e) => e.id)).toEqual([ids.c2]);
    expect(typed.has_more).toBe(true);
    for (const bad of ['?limit=0', '?limit=101', '?limit=x', '?starting_after=evt_nope', '?colour=red']) {
      const res = await api(h.base, key, 'GET', `/v1/events${bad}`);
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
    }

    const one = await api<{ id: string }>(h.base, key, 'GET', `/v1/events/${ids.p2}`);
    expect(one.status).toBe(200);
    expect(one.json.id).toBe(ids.p2);

    // Another merchant (and this merchant's live mode) sees none of it.
    const other = await h.merchant();
    for (const otherKey of [other.test_secret_key, shop.live_secret_key]) {
      for (const [method, path] of [
        ['GET', `/v1/events/${ids.p2}`],
        ['GET', `/v1/events/${ids.p2}/deliveries`],
        ['POST', `/v1/events/${ids.p2}/redeliver`],
      ] as const) {
        const res = await api<{ error: { code: string } }>(h.base, otherKey, method, path, method === 'POST' ? {} : undefined);
        expect({ path, status: res.status, code: res.json.error?.code }).toEqual({ path, status: 404, code: 'resource_missing' });
      }
      expect((await list('')).data).toHaveLength(4);
      const theirs = await api<EventList>(h.base, otherKey, 'GET', '/v1/events');
      expect(theirs.json.data).toEqual([]);
      const cursor = await api<{ error: { code: string } }>(h.base, otherKey, 'GET', `/v1/events?starting_after=${ids.p2}`);
      expect(cursor.status).toBe(400);
    }
    // The publishable key is not enough.
    expect((await api(h.base, shop.test_publishable_key, 'GET', '/v1/events')).status).toBe(403);
  });

  test('redeliver resends an event with the same id and bytes; replay re-queues every event since a time to one endpoint', async () => {
    const shop = await h.merchant();
    const key = shop.test_secret_key;
    const r = await receiver();
    const endpoint = await createEndpoint(h.base, key, r.url(), ['*']);
    const o1 = await createOrder(h.base, key, { reference: 'RE-1' });
    await waitFor('o1 delivered', () => r.acceptedIds().size, (n) => n === 1);
    await sleep(20);
    const since = new Date();
    await sleep(20);
    const o2 = await createOrder(h.base, key, { reference: 'RE-2' });
    await payOrder(h.base, key, o2.id);
    await waitFor('3 deliveries', () => r.acceptedIds().size, (n) => n === 3);
    const c1 = (await eventOf(o1.id, 'order.created')).id;
    const c2 = (await eventOf(o2.id, 'order.created')).id;
    const p2 = (await eventOf(o2.id, 'order.paid')).id;
    expect(r.requests).toHaveLength(3);

    // Redeliver one event (to every subscribed endpoint, then to one by id).
    const redelivered = await api<{ object: string; queued: number }>(h.base, key, 'POST', `/v1/events/${p2}/redeliver`, {});
    expect(redelivered.status, JSON.stringify(redelivered.json)).toBe(200);
    expect(redelivered.json).toMatchObject({ object: 'redelivery', event_id: p2, queued: 1 });
    await waitFor('the redelivery', () => r.of(p2).length, (n) => n === 2);
    const [first, again] = r.of(p2) as [ReceivedRequest, ReceivedRequest];
    expect(again.body.id).toBe(p2);
    expect(again.headers['checkout-event-id']).toBe(p2);
    expect(again.raw.equals(first.raw)).toBe(true);
    expect(verdict(() => verifyWebhook(again.raw, again.signature, endpoint.secret))).toBe('ok');
    await waitFor('two attempts in the log', () => attemptsOf(key, p2), (list) => list.length === 2 && list.every((x) => x.status_code === 200));

    const toOne = await api<{ queued: number }>(h.base, key, 'POST', `/v1/events/${c1}/redeliver`, { endpoint_id: endpoint.id });
    expect(toOne.json.queued).toBe(1);
    await waitFor('c1 again', () => r.of(c1).length, (n) => n === 2);
    const unknown = await api<{ error: { code: string } }>(h.base, key, 'POST', `/v1/events/${c1}/redeliver`, { endpoint_id: 'we_nope' });
    expect(unknown.status).toBe(404);

    // Replay since a time: o2's two events are queued again, o1's is not.
    const before = r.requests.length;
    const replay = await api<{ object: string; queued: number }>(h.base, key, 'POST', `/v1/webhook_endpoints/${endpoint.id}/replay`, { since: since.toISOString() });
    expect(replay.status, JSON.stringify(replay.json)).toBe(200);
    expect(replay.json).toMatchObject({ object: 'replay', endpoint_id: endpoint.id, queued: 2 });
    await waitFor('the replayed events', () => r.requests.length, (n) => n >= before + 2);
    await sleep(300);
    expect(r.requests.slice(before).map((x) => x.body.id).sort()).toEqual([c2, p2].sort());
    expect(r.of(c1)).toHaveLength(2);

    const missing = await api<{ error: { code: string; param: string } }>(h.base, key, 'POST', `/v1/webhook_endpoints/${endpoint.id}/replay`, {});
    expect(missing.status).toBe(400);
    expect(missing.json.error.param).toBe('since');
    const elsewhere = await api(h.base, (await h.merchant()).test_secret_key, 'POST', `/v1/webhook_endpoints/${endpoint.id}/replay`, { since: since.toISOString() });
    expect(elsewhere.status).toBe(404);
  });
});

describe('endpoint management', () => {
  test('CRUD: the default endpoint waits for a URL; PATCH url, enabled_events and disabled take effect on deliveries; DELETE stops them', async () => {
    const shop = await h.merchant();
    const key = shop.test_secret_key;

    // The sandbox's default endpoint: holds the issued webhook secret, no URL yet.
    const initial = await api<{ data: EndpointJson[] }>(h.base, key, 'GET', '/v1/webhook_endpoints');
    expect(initial.json.data).toHaveLength(1);
    const def = initial.json.data[0]!;
    expect(def).toMatchObject({ is_default: true, url: null, status: 'disabled', disabled_reason: 'no_url', enabled_events: ['*'], livemode: false });
    // Enabling it without a URL keeps it waiting.
    const stillNoUrl = await api<EndpointJson>(h.base, key, 'PATCH', `/v1/webhook_endpoints/${def.id}`, { disabled: false });
    expect(stillNoUrl.json).toMatchObject({ status: 'disabled', disabled_reason: 'no_url' });

    const r1 = await receiver();
    const r2 = await receiver();
    const created = await createEndpoint(h.base, key, r1.url(), ['order.created']);
    const listed = await api<{ data: EndpointJson[] }>(h.base, key, 'GET', '/v1/webhook_endpoints');
    expect(listed.json.data.map((e) => e.id)).toEqual([created.id, def.id]);
    const got = await api<EndpointJson>(h.base, key, 'GET', `/v1/webhook_endpoints/${created.id}`);
    expect(got.json).toEqual({ ...created, secret: undefined, object: 'webhook_endpoint' } as unknown as EndpointJson);
    expect('secret' in got.json).toBe(false);

    // PATCH url and enabled_events: the next order.paid goes to r2, order.created no longer does.
    const patched = await api<EndpointJson>(h.base, key, 'PATCH', `/v1/webhook_endpoints/${created.id}`, { url: r2.url('/v2'), enabled_events: ['order.paid', 'order.failed'] });
    expect(patched.status, JSON.stringify(patched.json)).toBe(200);
    expect(patched.json).toMatchObject({ id: created.id, url: r2.url('/v2'), enabled_events: ['order.paid', 'order.failed'], status: 'enabled' });
    const { eventId } = await paidOrder(key);
    await waitFor('r2 to get order.paid', () => r2.requests.length, (n) => n === 1);
    expect(r2.requests[0]!.body).toMatchObject({ id: eventId, type: 'order.paid' });
    expect(r2.requests[0]!.path).toBe('/v2');
    expect(r1.requests).toHaveLength(0);

    // Endpoints are chosen when the dispatcher consumes an event, not when it is committed. A probe endpoint
    // on every event tells when the dispatcher has taken one, so a change made after that cannot apply to it.
    const probe = await receiver();
    const probeEndpoint = await createEndpoint(h.base, key, probe.url(), ['*']);
    const consumed = (eventId: string) => waitFor(`the dispatcher to take ${eventId}`, () => probe.ids(), (ids) => ids.has(eventId));

    // Disabled by the merchant: nothing is sent; enabled again: it resumes.
    const disabled = await api<EndpointJson>(h.base, key, 'PATCH', `/v1/webhook_endpoints/${created.id}`, { disabled: true });
    expect(disabled.json).toMatchObject({ status: 'disabled', disabled_reason: 'by_merchant' });
    const whileOff = await paidOrder(key);
    await consumed(whileOff.eventId);
    await sleep(200);
    expect(r2.requests).toHaveLength(1);
    expect(await deliveryRows(created.id)).toHaveLength(1);
    const enabled = await api<EndpointJson>(h.base, key, 'PATCH', `/v1/webhook_endpoints/${created.id}`, { disabled: false });
    expect(enabled.json).toMatchObject({ status: 'enabled', disabled_reason: null });
    const afterOn = await paidOrder(key);
    await waitFor('the delivery after re-enabling', () => r2.ids(), (ids) => ids.has(afterOn.eventId));
    expect(r2.ids().has(whileOff.eventId)).toBe(false);

    // Validation.
    for (const [body, code] of [
      [{ enabled_events: ['order.shipped'] }, 'enabled_events_invalid'],
      [{ enabled_events: ['*', 'order.paid'] }, 'enabled_events_invalid'],
      [{ enabled_events: [] }, 'enabled_events_invalid'],
      [{ url: 'mailto:x@example.com' }, 'url_invalid'],
      [{ colour: 'red' }, 'parameter_unknown'],
    ] as const) {
      const res = await api<{ error: { code: string } }>(h.base, key, 'PATCH', `/v1/webhook_endpoints/${created.id}`, body);
      expect({ body, status: res.status, code: res.json.error?.code }).toEqual({ body, status: 400, code });
    }

    // DELETE: gone for GET, PATCH, a second DELETE and the list; no more deliveries.
    const deleted = await api(h.base, key, 'DELETE', `/v1/webhook_endpoints/${created.id}`);
    expect(deleted).toEqual({ status: 200, json: { id: created.id, object: 'webhook_endpoint', deleted: true } });
    for (const [method, body] of [['GET', undefined], ['PATCH', { disabled: true }], ['DELETE', undefined]] as const) {
      const res = await api<{ error: { code: string } }>(h.base, key, method, `/v1/webhook_endpoints/${created.id}`, body);
      expect({ method, status: res.status, code: res.json.error?.code }).toEqual({ method, status: 404, code: 'resource_missing' });
    }
    expect((await api<{ data: EndpointJson[] }>(h.base, key, 'GET', '/v1/webhook_endpoints')).json.data.map((e) => e.id)).toEqual([probeEndpoint.id, def.id]);
    const afterDelete = await paidOrder(key);
    await consumed(afterDelete.eventId);
    // Another merchant cannot see or change this merchant's endpoints.
    const other = await h.merchant();
    expect((await api(h.base, other.test_secret_key, 'GET', `/v1/webhook_endpoints/${def.id}`)).status).toBe(404);
    expect((await api(h.base, other.test_secret_key, 'PATCH', `/v1/webhook_endpoints/${def.id}`, { url: r1.url() })).status).toBe(404);

    // Setting the default endpoint's URL enables it; its deliveries verify with the sandbox's webhook_secret.
    const r3 = await receiver();
    const withUrl = await api<EndpointJson>(h.base, key, 'PATCH', `/v1/webhook_endpoints/${def.id}`, { url: r3.url() });
    expect(withUrl.json).toMatchObject({ is_default: true, url: r3.url(), status: 'enabled', disabled_reason: null });
    const { eventId: viaDefault, order: defaultOrder } = await paidOrder(key);
    await waitFor('the default endpoint delivery', () => r3.ids(), (ids) => ids.has(viaDefault));
    const req = r3.of(viaDefault)[0]!;
    expect(verdict(() => verifyWebhook(req.raw, req.signature, shop.webhook_secret))).toBe('ok');
    expect(verdict(() => verifyWebhook(req.raw, req.signature, shop.live_webhook_secret))).toBe('signature_mismatch');
    await sleep(200);
    expect(r2.ids().has(afterDelete.eventId)).toBe(false);
    // The default endpoint subscribes to everything: order.created comes too; nothing from before its URL was set.
    await waitFor('both events of the order', () => r3.requests.length, (n) => n >= 2);
    expect(r3.requests.map((x) => [x.body.type, x.body.data.id]).sort()).toEqual([
      ['order.created', defaultOrder.id],
      ['order.paid', defaultOrder.id],
    ]);
  });

  test('an endpoint disabled with deliveries still pending: they wait without the dispatcher polling in a loop, and resume when it is enabled', async () => {
    const shop = await h.merchant();
    const key = shop.test_secret_key;
    // The dispatcher's sender loop claims from the queue; with nothing it can send it should sleep (pollMs 250).
    const claims = vi.spyOn(PostgresWebhookDeliveryQueue.prototype, 'claimDue');
    cleanups.push(async () => claims.mockRestore());
    const claimsPerSecond = async (ms: number) => {
      const before = claims.mock.calls.length;
      await sleep(ms);
      return (claims.mock.calls.length - before) / (ms / 1000);
    };
    const idle = await claimsPerSecond(1000);

    let answer = 500;
    const r = await receiver(() => ({ status: answer }));
    const endpoint = await createEndpoint(h.base, key, r.url(), ['order.paid']);
    const { eventId } = await paidOrder(key);
    await waitFor('a failed attempt', () => r.requests.length, (n) => n >= 1);
    expect((await api(h.base, key, 'PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: true })).status).toBe(200);
    // A retry already in flight when it was disabled settles (and is recorded) first.
    await waitFor('no attempt in flight', async () => ({ open: r.open, sent: r.requests.length, rows: await deliveryRows(endpoint.id) }), (x) => x.open === 0 && x.rows[0]?.attempt_count === x.sent);
    await sleep(200);
    const sent = r.requests.length;
    expect(await deliveryRows(endpoint.id)).toEqual([{ event_id: eventId, status: 'pending', attempt_count: sent }]);

    const disabled = await claimsPerSecond(2000);
    console.info(`[dispatcher load] claims per second: idle ${idle}; with a disabled endpoint's delivery due ${disabled}`);
    expect(idle).toBeLessThan(20);
    expect(disabled).toBeLessThan(20);
    expect(r.requests).toHaveLength(sent);

    answer = 200;
    expect((await api(h.base, key, 'PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: false })).status).toBe(200);
    await waitFor('the pending delivery to go out once enabled', () => deliveryRows(endpoint.id), (rows) => rows[0]?.status === 'succeeded');
    expect(r.requests.at(-1)!.body.id).toBe(eventId);
  });
});

describe('failures of the machinery', () => {
  const REPO = fileURLToPath(new URL('..', import.meta.url));

  /** `checkout dispatch` as a child process; resolves once it says it is dispatching. */
  async function startDispatcher(env: Record<string, string>): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['bin/checkout.ts', 'dispatch'], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let out = '';
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`checkout dispatch did not start within 15 s: ${out}`)), 15_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Dispatching webhooks')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`checkout dispatch exited (${signal ?? code}): ${out}`));
      });
    });
    return child;
  }

  test('the dispatcher process SIGKILLed with deliveries in flight: a new one delivers every event (the in-flight ones again once their lease ends)', async () => {
    const LEASE_MS = 3000;
    const env = { WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_LEASE_MS: String(LEASE_MS) };
    const own = await startHarness({ env: { ...env, RUN_DISPATCHER: 'false' } });
    cleanups.push(() => own.close());
    const childEnv = serviceEnv(own.db, { stream: own.config.natsStream, subjectPrefix: own.config.natsSubjectPrefix }, own.config.natsUrl, env);
    const r = await receiver(() => ({ status: 200, delayMs: 500 }));
    const key = own.sandbox.test_secret_key;
    const endpoint = await createEndpoint(own.base, key, r.url(), ['order.created']);

    const first = await startDispatcher(childEnv);
    const orders = await pool(40, 10, (i) => createOrder(own.base, key, { reference: `KILL-${i}` }));
    const eventIds: string[] = (await own.db.knex('events').whereIn('order_id', orders.map((o) => o.id)).pluck('id')) as string[];
    expect(eventIds).toHaveLength(40);

    // Some answered, a full set of 8 in flight: kill it.
    await waitFor('deliveries answered and others in flight', () => ({ accepted: r.acceptedIds().size, open: r.open }), (x) => x.accepted >= 8 && x.open >= 8, 15_000, 5);
    const killedAt = performance.now();
    // Arrived less than 400 ms ago, answered only after 500 ms: certainly unanswered when the process dies.
    const inFlight = r.requests.filter((x) => x.answered === undefined && killedAt - x.hr < 400).map((x) => x.body.id);
    const acceptedBefore = r.acceptedIds();
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    expect(inFlight.length).toBeGreaterThan(0);
    expect(acceptedBefore.size).toBeLessThan(40);
    const queuedAtKill = await own.db.knex('webhook_deliveries').where({ endpoint_id: endpoint.id }).count<{ count: string }[]>('* as count');

    await startDispatcher(childEnv);
    await waitFor('every event delivered', () => r.acceptedIds(), (ids) => eventIds.every((id) => ids.has(id)), 45_000, 50);
    await waitFor('every delivery settled', () => deliveryRows(endpoint.id, own), (rows) => rows.length === 40 && rows.every((row) => row.status === 'succeeded'), 10_000);

    // At least once: the requests cut off by the kill were made again, after the lease ran out.
    for (const id of inFlight) {
      const got = r.of(id);
      expect(got.length, id).toBeGreaterThanOrEqual(2);
      expect(got.at(-1)!.answered).toBe(200);
      expect(got.at(-1)!.hr - killedAt, id).toBeGreaterThan(LEASE_MS - 1500);
    }
    const duplicates = [...new Set(r.requests.map((x) => x.body.id))].filter((id) => r.of(id).length > 1);
    console.info(
      `[dispatcher killed] ${acceptedBefore.size} accepted before the kill, ${inFlight.length} in flight, ${queuedAtKill[0]!.count} queued; ` +
        `${r.requests.length} requests for 40 events (${duplicates.length} sent more than once); all delivered ${Math.round(performance.now() - killedAt)} ms after the kill`,
    );
  }, 75_000);

  test('NATS restarted while orders keep coming: every event reaches the receiver', async () => {
    const nats = await startOwnNatsServer();
    cleanups.push(() => nats.destroy());
    const own = await startHarness({ natsUrl: nats.url });
    cleanups.push(() => own.close());
    const r = await receiver();
    const key = own.sandbox.test_secret_key;
    await createEndpoint(own.base, key, r.url(), ['*']);

    let stop = false;
    let created = 0;
    const failures: string[] = [];
    const load = pool(4, 4, async (worker) => {
      for (let i = 0; !stop; i += 1) {
        const order = await createOrder(own.base, key, { reference: `NATS-${worker}-${i}` }).catch((err: Error) => void failures.push(err.message));
        if (order && i % 3 === 0) await payOrder(own.base, key, order.id).catch((err: Error) => void failures.push(err.message));
        created += 1;
        await sleep(20);
      }
    });
    await waitFor('traffic flowing to the receiver', () => r.requests.length, (n) => n >= 20, 10_000);
    await nats.stop();
    const createdAtStop = created;
    await sleep(2500);
    const createdWhileDown = created - createdAtStop;
    await nats.start();
    await sleep(1500);
    stop = true;
    await load;
    expect(failures).toEqual([]);
    expect(createdWhileDown).toBeGreaterThan(10);

    const merchantEvents = async () => (await own.db.knex('events').where({ merchant_id: own.sandbox.merchant_id }).pluck('id')) as string[];
    const all = await merchantEvents();
    const missing = await waitFor(
      'every event of the events table at the receiver',
      () => all.filter((id) => !r.acceptedIds().has(id)),
      (left) => left.length === 0,
      30_000,
      100,
    );
    expect(missing).toEqual([]);
    expect(new Set(await merchantEvents())).toEqual(new Set(all));
    console.info(`[nats restart] ${all.length} events (${createdWhileDown} orders created while NATS was down), ${r.requests.length} requests`);
  }, 75_000);
});
