/**
 * Webhook delivery, against the real Postgres and the run's events' transport: the service runs in this process
 * (startService, own database and stream, short retry schedule), receivers are real node:http servers
 * on 127.0.0.1, and what they get is checked with the merchant SDK's verifier.
 *
 * What happens once an event is in the delivery queue (retries, timeouts, signatures, secrets, the
 * caps that isolate endpoints and merchants, the event log, endpoint management) does not depend on how
 * the event reached the dispatcher, so these suites run once: over JetStream when the run has NATS, else
 * over the event stream in Postgres (test/support/requirements.ts, harnessEventsMode). What does (an event delivered
 * exactly once, the workers in other processes, a dispatcher killed, the transport going away) is in
 * test/webhooks.test.ts, which runs in both of the events' modes.
 */
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { PostgresWebhookDeliveryQueue } from '../src/modules/webhook/adapters/postgres/postgres-webhook-delivery-queue.ts';
import { eventToRow } from '../src/modules/event/adapters/postgres/postgres-event-outbox.ts';
import type { DomainEvent } from '../src/modules/event/domain/domain-event.ts';
import { verifyWebhook, WebhookVerificationError } from '../sdk/index.ts';
import {
  api,
  createEndpoint,
  createOrder,
  deliveryHelpers,
  payOrder,
  pool,
  Receiver,
  startHarness,
  timestampOf,
  v1Parts,
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

const { attemptsOf, eventOf, deliveryRows, paidOrder } = deliveryHelpers(() => h);

/**
 * Keeps every retry time the dispatcher stores: a trigger copies a delivery's row each time an attempt is
 * recorded (attempt_count grows), since the row itself only holds the latest next_attempt_at.
 */
async function keepStoredSchedule(harness: Harness): Promise<void> {
  await harness.db.knex.raw(`
    CREATE TABLE test_delivery_schedule (delivery_id bigint NOT NULL, attempt_count int NOT NULL, attempted_at timestamptz NOT NULL, next_attempt_at timestamptz NOT NULL, status text NOT NULL);
    CREATE FUNCTION test_keep_schedule() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_delivery_schedule VALUES (NEW.id, NEW.attempt_count, NEW.updated_at, NEW.next_attempt_at, NEW.status);
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_keep_schedule AFTER UPDATE OF attempt_count ON webhook_deliveries
      FOR EACH ROW WHEN (NEW.attempt_count <> OLD.attempt_count) EXECUTE FUNCTION test_keep_schedule();
  `);
}

/** One recorded attempt of an endpoint's delivery and the retry time stored with it (ms since the epoch). */
interface ScheduledAttempt {
  attempt: number;
  attemptedAt: number;
  nextAttemptAt: number;
  status: string;
}

/** The stored schedule of the endpoint's deliveries, attempt by attempt. */
async function storedSchedule(endpointId: string): Promise<ScheduledAttempt[]> {
  const rows: { attempt_count: number; attempted_at: Date; next_attempt_at: Date; status: string }[] = await h.db
    .knex('test_delivery_schedule as s')
    .join('webhook_deliveries as d', 'd.id', 's.delivery_id')
    .where('d.endpoint_id', endpointId)
    .orderBy('s.attempt_count')
    .select('s.attempt_count', 's.attempted_at', 's.next_attempt_at', 's.status');
  return rows.map((r) => ({ attempt: r.attempt_count, attemptedAt: r.attempted_at.getTime(), nextAttemptAt: r.next_attempt_at.getTime(), status: r.status }));
}

beforeAll(async () => {
  process.on('warning', onWarning);
  h = await startHarness();
  await keepStoredSchedule(h);
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

describe('delivery attempts (service in process, real Postgres and events, real HTTP receivers)', () => {
  test('500, 500, then 200: retried with the same event id and the same bytes, three attempts logged, growing delays', async () => {
    const shop = await h.merchant();
    const r = await receiver((req) => (req.nth < 2 ? { status: 500, body: `boom ${req.nth}` } : { status: 200, body: 'thanks' }));
    const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url(), ['order.paid']);
    const { eventId } = await paidOrder(shop.test_secret_key);

    await waitFor('three attempts', () => r.requests.length, (n) => n >= 3, 30_000);
    await waitFor('the delivery to succeed', () => deliveryRows(endpoint.id), (rows) => rows[0]?.status === 'succeeded', 30_000);
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

    // The retry times the dispatcher computed through its Clock and stored: WEBHOOK_RETRY_BASE_MS=200, so
    // 200 ms ±25 % after the first failure, then 400 ms ±25 %: the delays grow. None after the success.
    const schedule = await storedSchedule(endpoint.id);
    expect(schedule.map((x) => [x.attempt, x.status])).toEqual([[1, 'pending'], [2, 'pending'], [3, 'succeeded']]);
    expect(schedule.map((x) => x.attemptedAt)).toEqual(attempts.map((x) => Date.parse(x.attempted_at)));
    const delays = schedule.map((x) => x.nextAttemptAt - x.attemptedAt);
    expect(delays[0]).toBeGreaterThanOrEqual(150);
    expect(delays[0]).toBeLessThanOrEqual(250);
    expect(delays[1]).toBeGreaterThanOrEqual(300);
    expect(delays[1]).toBeLessThanOrEqual(500);
    expect(delays[2]).toBe(0);
    // A retry never goes out before its time (the claim takes only deliveries that are due).
    expect(schedule[1]!.attemptedAt).toBeGreaterThanOrEqual(schedule[0]!.nextAttemptAt);
    expect(schedule[2]!.attemptedAt).toBeGreaterThanOrEqual(schedule[1]!.nextAttemptAt);
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

    await waitFor('the retry after the timeout', () => r.requests.length, (n) => n >= 2, 30_000);
    await waitFor('the delivery to succeed', () => deliveryRows(endpoint.id), (rows) => rows[0]?.status === 'succeeded', 30_000);
    const [first, second] = r.requests as [ReceivedRequest, ReceivedRequest];
    expect(second.raw.equals(first.raw)).toBe(true);
    // The sender gave up on the hanging request itself: it closed the connection, no answer was ever written.
    expect(first.answered).toBeUndefined();
    expect(first.abortedAt).toBeDefined();

    const attempts = await attemptsOf(shop.test_secret_key, eventId);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ status_code: null, response_excerpt: '' });
    expect(attempts[0]!.error).toMatch(/timed out after 1000 ms/);
    // Not before WEBHOOK_TIMEOUT_MS (less a little: Node's timers start from the event loop's cached time).
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(950);
    expect(attempts[1]).toMatchObject({ status_code: 204, error: null });
    // Then the first retry delay (200 ms ±25 %), as stored, and the retry no earlier than that.
    const [timedOut, retried] = (await storedSchedule(endpoint.id)) as [ScheduledAttempt, ScheduledAttempt];
    expect(timedOut.nextAttemptAt - timedOut.attemptedAt).toBeGreaterThanOrEqual(150);
    expect(timedOut.nextAttemptAt - timedOut.attemptedAt).toBeLessThanOrEqual(250);
    expect(retried.attemptedAt).toBeGreaterThanOrEqual(timedOut.nextAttemptAt);
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

    const askedAt = Date.now();
    const rotated = await api<EndpointJson & { secret: string; old_secret_expires_at: string }>(h.base, shop.test_secret_key, 'POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { overlap_seconds: 3600 });
    const answeredAt = Date.now();
    expect(rotated.status, JSON.stringify(rotated.json)).toBe(200);
    const newSecret = rotated.json.secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    // The old secret retires an hour after the rotation, which happened between the request and its answer.
    const expiresAt = new Date(rotated.json.old_secret_expires_at).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(askedAt + 3600_000);
    expect(expiresAt).toBeLessThanOrEqual(answeredAt + 3600_000);

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

    // After the overlap: the old secret no longer signs. Rather than wait an hour, the hour passes in the
    // database: the old secret's expiry moves into the past, where the clock would have brought it.
    const retired = await h.db.knex('webhook_endpoint_secrets').where({ endpoint_id: endpoint.id }).whereNotNull('expires_at').update({ expires_at: new Date(Date.now() - 1000) });
    expect(retired).toBe(1);
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
  // A service of its own whose sender waits the longest allowed time (60 s) for an answer: a hanging endpoint then
  // holds every request it gets for longer than this test runs, and the only way B's deliveries can go out is that
  // the dispatcher keeps slots free of A. Stuck behind A (a shared queue, no per-endpoint cap), B would wait for
  // A's timeouts, a minute each, and never get its 300 events within the (generous) wait below.
  let iso: Harness;
  beforeAll(async () => {
    iso = await startHarness({ env: { WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_LEASE_MS: '120000' } });
  });
  afterAll(async () => {
    await iso?.close();
  });

  test.each(['hangs', 'is down'] as const)(
    'an endpoint that %s with 300 queued events does not hold up another endpoint of the same merchant',
    async (failure) => {
      const shop = await iso.merchant();
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
      const a = await createEndpoint(iso.base, shop.test_secret_key, slowUrl, ['order.created']);
      const b = await createEndpoint(iso.base, shop.test_secret_key, fast.url(), ['order.created']);
      // However the test ends, A's retries must not go on loading the dispatcher.
      cleanups.push(() => api(iso.base, shop.test_secret_key, 'DELETE', `/v1/webhook_endpoints/${a.id}`));

      const started = Date.now();
      const orders = await pool(300, 20, (i) => createOrder(iso.base, shop.test_secret_key, { reference: `ISO-${i}` }));
      const createdAllAt = Date.now();
      const events = await waitFor('300 order.created events', () => iso.db.knex('events').whereIn('order_id', orders.map((o) => o.id)).select('id', 'created_at'), (rows) => rows.length === 300);

      await waitFor('B to receive all 300 events', () => fast.acceptedIds().size, (n) => n === 300, 45_000);
      const doneAt = Date.now();
      expect(new Set(fast.ids())).toEqual(new Set(events.map((e) => e.id)));
      await waitFor("B's 300 deliveries recorded as succeeded", () => deliveryRows(b.id, iso), (rows) => rows.length === 300 && rows.every((row) => row.status === 'succeeded'), 30_000);

      // Latency per event on B, from the event's commit to its arrival: reported, not asserted (it measures the machine).
      const createdOf = new Map(events.map((e) => [e.id, new Date(e.created_at).getTime()]));
      const latencies = fast.requests.map((req) => req.at - createdOf.get(req.body.id)!).sort((x, y) => x - y);
      const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!;
      const aTries = Number((await iso.db.knex('webhook_delivery_attempts').where({ endpoint_id: a.id }).count<{ n: string }[]>('* as n'))[0]!.n);
      const report = `B: all 300 within ${doneAt - createdAllAt} ms of the last order (creating them took ${createdAllAt - started} ms); latency p50 ${latencies[149]} ms, p99 ${p99} ms, max ${latencies.at(-1)} ms; A: ${aTries} failed attempts recorded, ${slow?.requests.length ?? 0} requests received, ${slow?.maxOpen ?? 0} at most at once`;
      console.info(`[isolation, A ${failure}] ${report}`);

      // Meanwhile A got nothing through: every one of its 300 deliveries is queued, none succeeded.
      const aRows = await deliveryRows(a.id, iso);
      expect(aRows).toHaveLength(300);
      expect(aRows.filter((row) => row.status === 'succeeded')).toEqual([]);
      const aAttempts = () => iso.db.knex('webhook_delivery_attempts').where({ endpoint_id: a.id }).select('status_code', 'error') as Promise<{ status_code: number | null; error: string | null }[]>;
      if (slow) {
        // A hanging endpoint holds at most perEndpoint (8) deliveries at once, all still unanswered.
        expect(slow.requests.length, report).toBeGreaterThan(0);
        expect(slow.maxOpen, report).toBeLessThanOrEqual(8);
        expect(slow.requests.every((req) => req.answered === undefined)).toBe(true);
      } else {
        const attempts = await aAttempts();
        expect(attempts.length).toBeGreaterThan(0);
        expect(attempts.every((x) => x.status_code === null && x.error !== null)).toBe(true);
        expect(attempts.some((x) => /ECONNREFUSED|connect/i.test(x.error!))).toBe(true);
      }
      // 600 deliveries over kept-alive connections did not leave a listener behind per request.
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);

      // Deleting A gives up its backlog, including the attempts in flight when it goes: when they end,
      // they are recorded but bring nothing back.
      expect((await api(iso.base, shop.test_secret_key, 'DELETE', `/v1/webhook_endpoints/${a.id}`)).status).toBe(200);
      if (slow) {
        // The hanging requests end when the endpoint hangs up; wait until each one is recorded.
        const hung = slow.requests.length;
        await slow.close();
        const ended = await waitFor('the hanging attempts to be recorded', aAttempts, (rows) => rows.length >= hung, 30_000);
        expect(ended.every((x) => x.status_code === null && x.error !== null)).toBe(true);
      } else {
        // A refused attempt ends within milliseconds. Should one end after the check below, the check proves
        // less; it cannot fail because of it.
        await sleep(1500);
      }
      const left = await deliveryRows(a.id, iso);
      expect(left).toHaveLength(300);
      expect(left.filter((row) => row.status !== 'failed')).toEqual([]);
    },
    120_000,
  );
});

describe('isolation between merchants', () => {
  // A dispatcher with 16 slots, 8 per endpoint and 8 per merchant, whose sender waits a minute for an answer:
  // merchant A's two hanging endpoints could hold all 16 slots, and B's deliveries could then only go out once
  // A's requests time out, a minute each. With the per-merchant cap, A holds 8 and B's go out meanwhile.
  let iso: Harness;
  beforeAll(async () => {
    iso = await startHarness({
      env: { WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_LEASE_MS: '120000', WEBHOOK_CONCURRENCY: '16', WEBHOOK_CONCURRENCY_PER_ENDPOINT: '8', WEBHOOK_CONCURRENCY_PER_MERCHANT: '8' },
    });
  });
  afterAll(async () => {
    await iso?.close();
  });

  test("one merchant's hanging endpoints cannot take every slot from another merchant", async () => {
    const a = await iso.merchant();
    const b = await iso.merchant();
    const hanging = await receiver(() => 'hang');
    const fast = await receiver();
    const aEndpoints = [
      await createEndpoint(iso.base, a.test_secret_key, hanging.url('/a1'), ['order.created']),
      await createEndpoint(iso.base, a.test_secret_key, hanging.url('/a2'), ['order.created']),
    ];
    for (const endpoint of aEndpoints) cleanups.push(() => api(iso.base, a.test_secret_key, 'DELETE', `/v1/webhook_endpoints/${endpoint.id}`));
    await createEndpoint(iso.base, b.test_secret_key, fast.url(), ['order.created']);

    await pool(20, 10, (i) => createOrder(iso.base, a.test_secret_key, { reference: `A-${i}` }));
    await waitFor("A's endpoints to hold requests", () => hanging.requests.length, (n) => n >= 8, 30_000);
    const orders = await pool(10, 5, (i) => createOrder(iso.base, b.test_secret_key, { reference: `B-${i}` }));
    await waitFor("B to receive its 10 events while A's requests hang", () => fast.acceptedIds().size, (n) => n === 10, 45_000);
    expect(new Set(fast.requests.map((r) => r.body.data.reference))).toEqual(new Set(orders.map((o) => o.reference)));
    // A never had more requests open than its merchant's share, though its two endpoints could take 16.
    expect(hanging.maxOpen).toBeLessThanOrEqual(8);
    expect(hanging.requests.every((req) => req.answered === undefined)).toBe(true);
  }, 120_000);
});

describe('the delivery queue on Postgres', () => {
  test('enqueues made in one turn share one statement, and each caller gets its own event\'s answer: known or not, how many endpoints, a duplicate queued once', async () => {
    const shop = await h.merchant();
    const all = await createEndpoint(h.base, shop.test_secret_key, (await receiver()).url(), ['*']);
    const paidOnly = await createEndpoint(h.base, shop.test_secret_key, (await receiver()).url(), ['order.paid']);
    const event = (type: DomainEvent['type'], n: number): DomainEvent => ({
      id: `evt_batch${Date.now()}${n}`,
      type,
      merchantId: shop.merchant_id,
      livemode: false,
      subject: { type: 'order', id: `ord_Batch${n}` },
      orderId: null,
      reference: null,
      sequence: 1,
      createdAt: new Date(),
      data: { n },
    });
    const paid = event('order.paid', 1);
    const created = event('order.created', 2);
    const forged = event('order.paid', 3);
    // Already published: the relay leaves them alone, so only the calls below queue them.
    await h.db.knex('events').insert([paid, created].map((e) => ({ ...eventToRow(e), published_at: new Date() })));
    const queue = new PostgresWebhookDeliveryQueue(h.db.knex);
    const statements = vi.spyOn(h.db.knex, 'raw');
    const now = new Date();
    const answers = await Promise.all([paid, created, forged, paid].map((e) => queue.enqueue(e, JSON.stringify({ id: e.id }), now)));
    expect(statements).toHaveBeenCalledTimes(1);
    statements.mockRestore();
    expect(answers).toEqual([
      { known: true, queued: 2 },
      { known: true, queued: 1 },
      { known: false, queued: 0 },
      { known: true, queued: 2 },
    ]);
    const rows = await h.db.knex('webhook_deliveries').whereIn('event_id', [paid.id, created.id, forged.id]).select('event_id', 'endpoint_id');
    expect(rows.map((r) => `${r.event_id === paid.id ? 'paid' : r.event_id === created.id ? 'created' : 'forged'}:${r.endpoint_id === all.id ? 'all' : r.endpoint_id === paidOnly.id ? 'paidOnly' : '?'}`).sort()).toEqual([
      'created:all',
      'paid:all',
      'paid:paidOnly',
    ]);
  });
});

describe('the delivery queue on Postgres, a bad copy in the batch', () => {
  test('an event Postgres cannot take, or a forged copy of a real one, fails or is refused alone: the real events of the batch are queued', async () => {
    const shop = await h.merchant();
    const endpoint = await createEndpoint(h.base, shop.test_secret_key, (await receiver()).url(), ['*']);
    const event = (n: number, merchantId = shop.merchant_id, id = `evt_bad${Date.now()}${n}`): DomainEvent => ({
      id,
      type: 'order.paid',
      merchantId,
      livemode: false,
      subject: { type: 'order', id: `ord_Bad${n}` },
      orderId: null,
      reference: null,
      sequence: 1,
      createdAt: new Date(),
      data: { n },
    });
    const real = [event(1), event(2)];
    await h.db.knex('events').insert(real.map((e) => ({ ...eventToRow(e), published_at: new Date() })));
    const poison = event(3, shop.merchant_id, 'evt_\u0000poison');
    const forged = event(4, 'mer_someoneelse', real[0]!.id);
    const queue = new PostgresWebhookDeliveryQueue(h.db.knex);
    const now = new Date();
    const settled = await Promise.allSettled([real[0]!, poison, forged, real[1]!].map((e) => queue.enqueue(e, JSON.stringify({ id: e.id }), now)));
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : 'failed'))).toEqual([{ known: true, queued: 1 }, 'failed', { known: false, queued: 0 }, { known: true, queued: 1 }]);
    const rows = await h.db.knex('webhook_deliveries').where({ endpoint_id: endpoint.id }).whereIn('event_id', real.map((e) => e.id)).select('event_id', 'merchant_id');
    expect(rows.map((r) => r.event_id).sort()).toEqual(real.map((e) => e.id).sort());
    expect(new Set(rows.map((r) => r.merchant_id))).toEqual(new Set([shop.merchant_id]));
  });
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

  // How often the sender loop polls (idle, and with a disabled endpoint's delivery due) is a figure, printed by
  // bench/dispatcher-polls.ts (npm run bench:dispatcher-polls); here: the loop has nothing to wake for.
  test('an endpoint disabled with deliveries still pending: they wait, nothing wakes the dispatcher for them, and they resume when it is enabled', async () => {
    const shop = await h.merchant();
    const key = shop.test_secret_key;

    let answer = 500;
    const r = await receiver(() => ({ status: answer }));
    const endpoint = await createEndpoint(h.base, key, r.url(), ['order.paid']);
    const { eventId } = await paidOrder(key);
    await waitFor('a failed attempt', () => r.requests.length, (n) => n >= 1);
    expect((await api(h.base, key, 'PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: true })).status).toBe(200);
    // A retry already in flight when it was disabled settles (and is recorded) first. In flight means leased: a
    // claim pushes next_attempt_at a lease (40 s) ahead, a recorded failure at most 1.25 s (the retry cap).
    const leased = (row: { next_attempt_at: Date }) => row.next_attempt_at.getTime() > Date.now() + 10_000;
    await waitFor(
      'no attempt in flight',
      async () => ({ open: r.open, sent: r.requests.length, row: await h.db.knex('webhook_deliveries').where({ endpoint_id: endpoint.id }).first('attempt_count', 'next_attempt_at') }),
      (x) => x.open === 0 && x.row?.attempt_count === x.sent && !leased(x.row),
      30_000,
    );
    const sent = r.requests.length;
    expect(await deliveryRows(endpoint.id)).toEqual([{ event_id: eventId, status: 'pending', attempt_count: sent }]);

    // The sender loop sleeps until the queue's next due time: with every other endpoint set aside, the disabled
    // endpoint's due delivery gives none (it would otherwise wake the loop at once, again and again).
    const others: string[] = await h.db.knex('webhook_endpoints').whereNot({ id: endpoint.id }).pluck('id');
    expect(await new PostgresWebhookDeliveryQueue(h.db.knex).nextDueAt(others)).toBeUndefined();
    await sleep(1000);
    expect(r.requests).toHaveLength(sent);

    answer = 200;
    expect((await api(h.base, key, 'PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: false })).status).toBe(200);
    await waitFor('the pending delivery to go out once enabled', () => deliveryRows(endpoint.id), (rows) => rows[0]?.status === 'succeeded');
    expect(r.requests.at(-1)!.body.id).toBe(eventId);
  });
});
