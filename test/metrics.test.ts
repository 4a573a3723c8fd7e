/**
 * Seeing the service run: the whole service in this process (own database and stream), scraped at
 * GET /metrics over the network before and after real work (orders over REST, card payments over
 * Connect, a bank transfer, a rate-limit refusal, webhooks to loopback receivers, one failing), and
 * its log lines captured: every line JSON, the request id on the lines of a request, the event id on
 * the relay's and the dispatcher's. A worker process's METRICS_PORT listener is scraped too.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { CheckoutService } from '../src/gen/checkout/v1/checkout_pb.ts';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { loadConfig } from '../src/composition/config.ts';
import { startWorkerProcess } from '../server/service.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { api, createEndpoint, createOrder, payOrder, Receiver, serviceEnv, startHarness, type Harness } from './support/webhooks.ts';
import { createTestDatabase } from './support/database.ts';
import { uniqueStream } from './support/nats-server.ts';
import { waitFor } from './support/wait.ts';
import { pageTokenAt } from './support/payments.ts';
import { anEvent } from './contracts/event-transports.ts';
import { PostgresEventOutbox } from '../src/modules/event/adapters/postgres/postgres-event-outbox.ts';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

// ---------------------------------------------------------------- Prometheus text

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses the text exposition format (no escapes beyond \" and \\ in label values, which is all we emit). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!.replace(/\\(.)/g, '$1');
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of a name whose labels include these. */
function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

// ---------------------------------------------------------------- the service

let h: Harness;
let shop: SandboxCredentials;
const lines: string[] = [];
const receivers: Receiver[] = [];

async function scrape(headers: Record<string, string> = {}): Promise<Sample[]> {
  const res = await fetch(`${h.base}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

beforeAll(async () => {
  h = await startHarness({
    env: {
      LOG_LEVEL: 'debug',
      METRICS_TOKEN,
      // A small bucket, so that one key can be refused; the flows below use another key.
      RATE_LIMIT_PER_SECOND: '1',
      RATE_LIMIT_BURST: '30',
    },
    logDestination: { write: (chunk: string) => void lines.push(...chunk.split('\n').filter((l) => l !== '')) },
  });
  shop = h.sandbox;
}, 60_000);

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await h?.close();
});

describe('GET /metrics', () => {
  test('counts requests, payments, refusals, the outbox and webhooks with bounded labels', async () => {
    const ok = await Receiver.start(() => ({ status: 200 }));
    const failing = await Receiver.start(() => ({ status: 503 }));
    receivers.push(ok, failing);
    const okEndpoint = await createEndpoint(h.base, shop.test_secret_key, ok.url(), ['order.paid']);
    const failingEndpoint = await createEndpoint(h.base, shop.test_secret_key, failing.url(), ['order.failed']);

    const before = await scrape();

    // Orders over REST; a lookup of an order that does not exist; a URL no route matches.
    const orders = [];
    for (let i = 0; i < 4; i++) orders.push(await createOrder(h.base, shop.test_secret_key, { reference: `metrics-${i}` }));
    expect((await api(h.base, shop.test_secret_key, 'GET', '/v1/orders/ord_doesnotexist0000000000')).status).toBe(404);
    expect((await fetch(`${h.base}/no/such/route`)).status).toBe(404);

    // Card payments over Connect (HTTP/1.1), as the checkout page makes them.
    const checkout = createClient(CheckoutService, createConnectTransport({ baseUrl: h.base, httpVersion: '1.1' }));
    const pay = async (orderId: string, behaviour: string) => {
      const checkoutId = orderId.slice(4);
      const token = await pageTokenAt(h.base, checkoutId);
      const card = shop.test_cards.find((c) => c.behaviour === behaviour)!;
      return checkout.submitCardPayment(
        { checkoutId, submissionId: `sub-${orderId}`, card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' } },
        { headers: { 'checkout-token': token } },
      );
    };
    await pay(orders[0]!.id, 'approved');
    await pay(orders[1]!.id, 'hard_decline');
    await pay(orders[2]!.id, 'soft_decline');
    await payOrder(h.base, shop.test_secret_key, orders[3]!.id);

    // Another merchant's key spends its bucket: every 429 is one refusal.
    const other = await h.merchant('Busy shop');
    let refused = 0;
    for (let i = 0; i < 100 && refused < 3; i++) {
      const res = await api(h.base, other.test_secret_key, 'GET', '/v1/orders?limit=1');
      if (res.status === 429) refused += 1;
    }
    expect(refused).toBe(3);

    // Three orders paid (approved, soft decline then approved, transfer) reach the endpoint of order.paid; the declined one fails at the other.
    await waitFor('three order.paid webhooks answered', () => ok.acceptedIds().size, (n) => n === 3, 30_000);
    await waitFor('a failed delivery attempt', () => failing.requests.filter((r) => r.answered === 503).length, (n) => n >= 1, 30_000);
    // Counted once the attempt is recorded, just after the receiver answered.
    const after = await waitFor(
      'the deliveries counted',
      () => scrape(),
      (s) =>
        valueOf(s, 'checkout_webhook_delivery_attempts_total', { result: 'succeeded' }) - valueOf(before, 'checkout_webhook_delivery_attempts_total', { result: 'succeeded' }) === 3 &&
        valueOf(s, 'checkout_webhook_delivery_failures_total', { endpoint_id: failingEndpoint.id }) >= 1 &&
        valueOf(s, 'checkout_outbox_oldest_unpublished_age_seconds') === 0,
      30_000,
    );
    const moved = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);

    // Every series says which process it is.
    expect(after.every((s) => s.labels.role === 'serve')).toBe(true);

    // REST by route pattern and status class; never a raw URL with an id.
    expect(moved('checkout_http_request_duration_seconds_count', { kind: 'rest', method: 'POST', route: '/v1/orders', status_class: '2xx' })).toBe(4);
    expect(moved('checkout_http_request_duration_seconds_count', { kind: 'rest', method: 'GET', route: '/v1/orders/:id', status_class: '4xx' })).toBe(1);
    expect(moved('checkout_http_request_duration_seconds_count', { kind: 'rest', method: 'POST', route: '/v1/test_helpers/orders/:id/simulate_transfer', status_class: '2xx' })).toBe(1);
    expect(moved('checkout_http_request_duration_seconds_count', { kind: 'rest', method: 'GET', route: '/v1/orders', status_class: '4xx' })).toBe(3);
    expect(moved('checkout_http_request_duration_seconds_count', { route: 'unmatched', status_class: '4xx' })).toBe(1);
    const routes = new Set(after.filter((s) => s.name.startsWith('checkout_http_request_duration_seconds')).map((s) => s.labels.route!));
    for (const route of routes) expect(route).not.toMatch(/ord_|mer_|we_|\?/);
    // The sum of durations moved with the count (a histogram, in seconds).
    expect(moved('checkout_http_request_duration_seconds_sum', { route: '/v1/orders', method: 'POST' })).toBeGreaterThan(0);

    // Connect calls by procedure and code, over the HTTP/1.1 mount.
    expect(moved('checkout_rpc_duration_seconds_count', { procedure: 'checkout.v1.CheckoutService/SubmitCardPayment', code: 'ok' })).toBe(3);
    // Each payment's page was opened first (its HTML carries the token; GetCheckout runs in process, unmeasured here).
    expect(moved('checkout_http_request_duration_seconds_count', { kind: 'checkout', route: '/c/:checkoutId', method: 'GET', status_class: '2xx' })).toBe(3);
    expect(moved('checkout_http_request_duration_seconds_count', { kind: 'connect', route: '/checkout.v1.CheckoutService/SubmitCardPayment', status_class: '2xx' })).toBe(3);

    // Payments by method, route, outcome and decline code: the soft decline counts on both routes.
    const attempts = (labels: Record<string, string>) => moved('checkout_payment_attempts_total', { mode: 'test', ...labels });
    expect(attempts({ method: 'card', route: 'simulated_alpha', outcome: 'succeeded', decline_code: '' })).toBe(1);
    expect(attempts({ method: 'card', route: 'simulated_alpha', outcome: 'declined', decline_code: 'expired_card' })).toBe(1);
    expect(attempts({ method: 'card', route: 'simulated_alpha', outcome: 'declined', decline_code: 'insufficient_funds' })).toBe(1);
    expect(attempts({ method: 'card', route: 'simulated_beta', outcome: 'succeeded', decline_code: '' })).toBe(1);
    expect(attempts({ method: 'bank_transfer', route: 'virtual_iban', outcome: 'succeeded' })).toBe(1);
    expect(attempts({})).toBe(5);

    expect(moved('checkout_rate_limit_refusals_total', { scope: 'api_key' })).toBe(3);
    expect(moved('checkout_rate_limit_refusals_total', { scope: 'card_velocity' })).toBe(0);

    // The outbox: at least one event per order created and per payment outcome was published, none is waiting.
    expect(moved('checkout_outbox_publish_delay_seconds_count')).toBeGreaterThanOrEqual(4 + 4);
    expect(valueOf(after, 'checkout_outbox_oldest_unpublished_age_seconds')).toBe(0);

    // Webhooks: the lag of the three first attempts that succeeded; failures by endpoint id and reason, none for the good endpoint.
    expect(moved('checkout_webhook_delivery_lag_seconds_count', { result: 'succeeded', attempt: 'first' })).toBe(3);
    expect(valueOf(after, 'checkout_webhook_delivery_failures_total', { endpoint_id: failingEndpoint.id, reason: '5xx' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'checkout_webhook_delivery_failures_total', { endpoint_id: okEndpoint.id })).toBe(0);
    const failureLabels = after.filter((s) => s.name === 'checkout_webhook_delivery_failures_total').map((s) => Object.keys(s.labels).sort().join(','));
    expect(new Set(failureLabels)).toEqual(new Set(['endpoint_id,reason,role']));

    // Node's own figures are there too.
    expect(valueOf(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  }, 90_000);

  test('is refused to a client a proxy relayed, and opened to it by METRICS_TOKEN', async () => {
    const relayed = await fetch(`${h.base}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(relayed.status).toBe(403);
    const body = (await relayed.json()) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe('metrics_forbidden');
    expect(body.error.request_id).toBe(relayed.headers.get('request-id'));
    const wrong = await fetch(`${h.base}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.7', authorization: 'Bearer not-the-token-at-all-000' } });
    expect(wrong.status).toBe(403);
    const samples = await scrape({ 'x-forwarded-for': '203.0.113.7', authorization: `Bearer ${METRICS_TOKEN}` });
    expect(samples.length).toBeGreaterThan(0);
  });

  test('is refused to a client on another machine, whatever its headers', async () => {
    const res = await h.service.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '198.51.100.4' });
    expect(res.statusCode).toBe(403);
    const opened = await h.service.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '198.51.100.4', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(opened.statusCode).toBe(200);
    expect(opened.body).toContain('checkout_http_request_duration_seconds');
  });
});

describe('a worker process', () => {
  test('serves its metrics on METRICS_PORT, on loopback', async () => {
    const db = await createTestDatabase({ migrate: false });
    // The sweeper needs no events: whether NATS_URL is set or not, nothing connects to NATS.
    const config = loadConfig(serviceEnv(db, uniqueStream(), undefined, { METRICS_PORT: '0', LOG_LEVEL: 'silent' }));
    const worker = await startWorkerProcess(config, ['sweeper']);
    try {
      const port = worker.metricsListener!.port;
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      const samples = parseExposition(await res.text());
      expect(samples.some((s) => s.name === 'checkout_outbox_oldest_unpublished_age_seconds' && s.labels.role === 'worker')).toBe(true);
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      await worker.close();
      await db.drop();
    }
  }, 60_000);
});

describe('without NATS', () => {
  test('the relay\'s delay counts appends to the event stream in Postgres, and each consumer\'s backlog is its oldest unhandled event\'s age', async () => {
    const db = await createTestDatabase({ migrate: false });
    const config = loadConfig(serviceEnv(db, uniqueStream(), undefined, { METRICS_PORT: '0', LOG_LEVEL: 'silent' }));
    const relay = await startWorkerProcess(config, ['relay']);
    let dispatcher: Awaited<ReturnType<typeof startWorkerProcess>> | undefined;
    try {
      const scrapeWorker = async () => parseExposition(await (await fetch(`http://127.0.0.1:${relay.metricsListener!.port}/metrics`)).text());
      const age = (samples: readonly Sample[]) => samples.find((s) => s.name === 'checkout_event_consumer_oldest_unhandled_age_seconds' && s.labels.consumer === 'webhook-dispatcher')?.value;
      // The dispatcher has consumed before (its durable consumer exists) and is not running now.
      await db.knex('event_consumers').insert({ name: 'webhook-dispatcher' });
      expect(age(await scrapeWorker())).toBe(0);
      const event = anEvent({ createdAt: new Date(Date.now() - 60_000) });
      await new PostgresEventOutbox(db.knex).append(event);
      // Both, in one scrape: the scrape reads the histogram before the gauge's query answers, so the gauge may
      // already see the append that the relay counts a moment later.
      const waiting = await waitFor(
        'the event appended, counted, and waiting for the dispatcher',
        scrapeWorker,
        (samples) => (age(samples) ?? 0) >= 59 && valueOf(samples, 'checkout_outbox_publish_delay_seconds_count') > 0,
        30_000,
      );
      expect(valueOf(waiting, 'checkout_outbox_publish_delay_seconds_count')).toBe(1);
      expect(valueOf(waiting, 'checkout_outbox_publish_delay_seconds_sum')).toBeGreaterThanOrEqual(59);
      // The dispatcher comes back and handles it (no endpoint to deliver to): nothing waits any more.
      dispatcher = await startWorkerProcess(config, ['dispatcher']);
      await waitFor('the consumer up to date', scrapeWorker, (samples) => age(samples) === 0, 30_000);
    } finally {
      await dispatcher?.close();
      await relay.close();
      await db.drop();
    }
  }, 90_000);
});

describe('logs', () => {
  test('every line is JSON; a request\'s lines carry its request id, the relay\'s and the dispatcher\'s the event id', async () => {
    // Its own merchant, endpoints and order: one webhook delivered, one refused.
    const merchant = await h.merchant('Logged shop');
    const ok = await Receiver.start(() => ({ status: 200 }));
    const failing = await Receiver.start(() => ({ status: 503 }));
    receivers.push(ok, failing);
    await createEndpoint(h.base, merchant.test_secret_key, ok.url(), ['order.created']);
    await createEndpoint(h.base, merchant.test_secret_key, failing.url(), ['order.created']);
    const order = await createOrder(h.base, merchant.test_secret_key, { reference: 'logs-1' });
    await waitFor('the webhook delivered', () => ok.acceptedIds().size, (n) => n === 1, 30_000);
    await waitFor('the webhook refused', () => failing.requests.filter((r) => r.answered === 503).length, (n) => n >= 1, 30_000);

    // A fault of ours while serving a request: the core logs it (through the service's Log) with the request's id.
    await h.db.knex.raw('ALTER TABLE payment_attempts RENAME TO payment_attempts_hidden');
    let res;
    // The same fault met over Connect on HTTP/1.1 and over h2c: each answer's request-id is the one its lines carry.
    const rpcIds: string[] = [];
    try {
      res = await fetch(`${h.base}/v1/orders/${order.id}`, { headers: { authorization: `Bearer ${merchant.test_secret_key}` } });
      for (const httpVersion of ['1.1', '2'] as const) {
        const orders = createClient(OrderService, createConnectTransport({ baseUrl: h.base, httpVersion }));
        const err = await orders.getOrder({ id: order.id }, { headers: { authorization: `Bearer ${merchant.test_secret_key}` } }).then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
        expect(err?.code).toBe(Code.Internal);
        rpcIds.push(err!.metadata.get('request-id')!);
      }
    } finally {
      await h.db.knex.raw('ALTER TABLE payment_attempts_hidden RENAME TO payment_attempts');
    }
    expect(res.status).toBe(500);
    const requestId = res.headers.get('request-id')!;
    expect(requestId).toMatch(/^req_/);

    const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rpcIds).toHaveLength(2);
    for (const id of rpcIds) expect(id).toMatch(/^req_/);
    const logged = await waitFor(
      'the internal errors and the dispatcher\'s lines logged',
      parsed,
      (all) =>
        [requestId, ...rpcIds].every((id) => all.some((l) => l.request_id === id && l.level === 'error')) && all.some((l) => String(l.msg).startsWith('webhook delivery attempt failed')) && all.some((l) => l.msg === 'webhook delivered'),
      10_000,
    );
    const ofRequest = logged.filter((l) => l.request_id === requestId);
    expect(ofRequest.some((l) => l.level === 'error' && String(l.msg).includes('internal error'))).toBe(true);
    for (const line of ofRequest) expect(line).toMatchObject({ role: 'serve', time: expect.any(String), level: expect.any(String) });

    // Relay lines (debug) name the events they published; the dispatcher's name the event, endpoint and attempt.
    const relayLines = logged.filter((l) => String(l.msg).startsWith('outbox relay'));
    expect(relayLines.length).toBeGreaterThan(0);
    for (const line of relayLines) expect(line.event_id).toMatch(/^evt_/);
    const dispatcherLines = logged.filter((l) => String(l.msg).startsWith('webhook'));
    expect(dispatcherLines.some((l) => l.msg === 'webhook delivered')).toBe(true);
    expect(dispatcherLines.some((l) => String(l.msg).startsWith('webhook delivery attempt failed') && l.status_code === 503)).toBe(true);
    for (const line of dispatcherLines) {
      expect(line.event_id).toMatch(/^evt_/);
      if (line.msg === 'webhook delivered' || String(line.msg).startsWith('webhook delivery attempt failed')) {
        expect(line).toMatchObject({ endpoint_id: expect.stringMatching(/^we_/), attempt: expect.any(Number), delivery_id: expect.any(String) });
      }
    }
    // Lines written outside any request carry no request id.
    expect(relayLines.every((l) => l.request_id === undefined)).toBe(true);
    // No card number anywhere (the sandbox's test cards were paid with in the first test).
    const all = lines.join('\n');
    for (const card of shop.test_cards) expect(all).not.toContain(card.number);
    expect(all).not.toMatch(/\b4\d{15}\b/);
  }, 30_000);
});
