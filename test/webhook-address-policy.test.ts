/**
 * The webhook address policy and the endpoint cap, end to end against the real Postgres and the run's
 * events' transport (JetStream when the run has NATS, else the event stream in Postgres):
 * one service without WEBHOOK_ALLOW_PRIVATE_NETWORKS (the default), one with it whose dispatchers
 * the tests run as `checkout dispatch` processes, with and without the switch. Receivers are real
 * servers on 127.0.0.1: the address the policy exists to keep webhooks away from.
 */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createAddressPolicy } from '../src/modules/webhook/adapters/http/address-policy.ts';
import { NodeHttpWebhookSender } from '../src/modules/webhook/adapters/http/node-http-webhook-sender.ts';
import { MAX_ENDPOINTS_PER_MODE } from '../src/modules/webhook/domain/webhook-endpoint.entity.ts';
import type { AddressPolicy } from '../src/modules/webhook/ports/address-policy.port.ts';
import { api, createEndpoint, createOrder, payOrder, pool, Receiver, serviceEnv, spawnDispatcher, startHarness, type EndpointJson, type Harness } from './support/webhooks.ts';
import { waitFor } from './support/wait.ts';


/** Without the switch, dispatcher running: what a production install does. */
let strict: Harness;
/** With the switch and no dispatcher of its own: the tests start one, with or without the switch. */
let open: Harness;
let cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  [strict, open] = await Promise.all([startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } }), startHarness({ env: { RUN_DISPATCHER: 'false' } })]);
});

afterEach(async () => {
  const pending = cleanups.reverse();
  cleanups = [];
  for (const cleanup of pending) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await Promise.all([strict?.close(), open?.close()]);
});

async function receiver(answer: { status: number; body?: string } = { status: 200 }): Promise<Receiver> {
  const r = await Receiver.start(() => answer);
  cleanups.push(() => r.close());
  return r;
}

type ErrorJson = { error: { type: string; code: string; message: string; param: string | null; request_id: string } };

/** The endpoints of a merchant's mode that are not deleted, straight from the database. */
async function liveRows(h: Harness, merchantId: string, livemode: boolean): Promise<number> {
  const [row] = await h.db.knex('webhook_endpoints').where({ merchant_id: merchantId, livemode }).whereNull('deleted_at').count<{ n: string }[]>('* as n');
  return Number(row!.n);
}

/** `checkout dispatch` for the `open` service as a child process; resolves once it says it is dispatching. */
async function startDispatcher(allowPrivateNetworks: boolean): Promise<ChildProcess> {
  const env = serviceEnv(open.db, { stream: open.config.natsStream, subjectPrefix: open.config.natsSubjectPrefix }, open.config.natsUrl, {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: String(allowPrivateNetworks),
  });
  const child = await spawnDispatcher(env);
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  return child;
}

interface AttemptJson {
  endpoint_id: string;
  status_code: number | null;
  error: string | null;
  response_excerpt: string;
}

async function attemptsOf(h: Harness, key: string, eventId: string): Promise<AttemptJson[]> {
  const res = await api<{ data: AttemptJson[] }>(h.base, key, 'GET', `/v1/events/${eventId}/deliveries`);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.data;
}

// The hosts the issue found accepted in live mode, and the usual local ones.
const ISSUE_HOSTS = ['[::127.0.0.1]', '[64:ff9b:1::7f00:1]', '[2002:7f00:1::]', '[fec0::1]', '192.0.2.1', '198.51.100.1'];
const LOCAL_HOSTS = ['127.0.0.1', '127.0.0.1:8443', 'localhost', '[::1]', '10.0.0.7', '172.16.4.2', '192.168.1.10', '[fd00::5]', '[::ffff:10.0.0.1]', 'printer.local', 'db.internal'];
const NEVER_HOSTS = ['169.254.169.254', '[fe80::1]', '[::ffff:169.254.169.254]', 'metadata.google.internal', '100.64.0.1', '0.0.0.0', '203.0.113.9', '[2001:db8::1]'];

describe('registration', () => {
  test('without the switch, test and live endpoints may not name loopback, private, link-local, metadata or reserved hosts; nothing is written; public hosts are accepted', async () => {
    const shop = await strict.merchant();
    const r = await receiver();
    for (const [key, scheme, livemode] of [
      [shop.test_secret_key, 'http', false],
      [shop.live_secret_key, 'https', true],
    ] as const) {
      for (const host of [...ISSUE_HOSTS, ...LOCAL_HOSTS, ...NEVER_HOSTS, `127.0.0.1:${r.port}`, `localhost:${r.port}`]) {
        const url = `${scheme}://${host}/webhooks`;
        const res = await api<ErrorJson>(strict.base, key, 'POST', '/v1/webhook_endpoints', { url, enabled_events: ['*'] });
        expect({ url, status: res.status, code: res.json.error?.code, param: res.json.error?.param }).toEqual({ url, status: 400, code: 'url_forbidden', param: 'url' });
      }
      expect(await liveRows(strict, shop.merchant_id, livemode)).toBe(1); // the default endpoint only
    }
    // The message says why and what to do instead.
    const local = await api<ErrorJson>(strict.base, shop.test_secret_key, 'POST', '/v1/webhook_endpoints', { url: `http://127.0.0.1:${r.port}/webhooks` });
    expect(local.json.error.message).toContain('127.0.0.1 is a loopback address');
    expect(local.json.error.message).toContain('checkout listen');
    const sixToFour = await api<ErrorJson>(strict.base, shop.live_secret_key, 'POST', '/v1/webhook_endpoints', { url: 'https://[2002:7f00:1::]/webhooks' });
    expect(sixToFour.json.error.message).toContain('6to4 of 127.0.0.1 (a loopback address)');

    // Updates are held to the same policy, the default endpoint's included.
    const [defaultTest] = (await api<{ data: EndpointJson[] }>(strict.base, shop.test_secret_key, 'GET', '/v1/webhook_endpoints')).json.data;
    const patched = await api<ErrorJson>(strict.base, shop.test_secret_key, 'PATCH', `/v1/webhook_endpoints/${defaultTest!.id}`, { url: `http://localhost:${r.port}/webhooks` });
    expect({ status: patched.status, code: patched.json.error?.code }).toEqual({ status: 400, code: 'url_forbidden' });

    // Public hosts pass in both modes (names are judged by their addresses only when delivering); live mode still needs https.
    for (const [key, url] of [
      [shop.test_secret_key, 'http://shop.example/webhooks'],
      [shop.test_secret_key, 'https://[2606:4700::1111]/webhooks'],
      [shop.live_secret_key, 'https://shop.example/webhooks'],
      [shop.live_secret_key, 'https://93.184.215.14/webhooks'],
    ] as const) {
      const ok = await api<EndpointJson>(strict.base, key, 'POST', '/v1/webhook_endpoints', { url, enabled_events: ['order.paid'] });
      expect({ url, status: ok.status }).toEqual({ url, status: 201 });
    }
    const insecure = await api<ErrorJson>(strict.base, shop.live_secret_key, 'POST', '/v1/webhook_endpoints', { url: 'http://shop.example/webhooks' });
    expect({ status: insecure.status, code: insecure.json.error?.code }).toEqual({ status: 400, code: 'url_invalid' });
    // Nothing was ever sent to the local receiver.
    expect(r.requests).toHaveLength(0);
  });

  test('with the switch, loopback and private hosts are accepted in both modes; link-local, metadata, reserved and the issue\'s hosts stay refused', async () => {
    const shop = await open.merchant();
    for (const [key, scheme] of [
      [shop.test_secret_key, 'http'],
      [shop.live_secret_key, 'https'],
    ] as const) {
      for (const host of ['127.0.0.1:4000', 'localhost:4000', '[::1]:4000', '10.0.0.7', '[fd00::5]', '[::ffff:192.168.1.10]']) {
        const res = await api(open.base, key, 'POST', '/v1/webhook_endpoints', { url: `${scheme}://${host}/webhooks`, enabled_events: ['order.expired'] });
        expect({ host, status: res.status }).toEqual({ host, status: 201 });
      }
      for (const host of [...ISSUE_HOSTS, ...NEVER_HOSTS]) {
        const res = await api<ErrorJson>(open.base, key, 'POST', '/v1/webhook_endpoints', { url: `${scheme}://${host}/webhooks` });
        expect({ host, status: res.status, code: res.json.error?.code }).toEqual({ host, status: 400, code: 'url_forbidden' });
      }
    }
  });
});

describe('delivery', () => {
  test('a dispatcher without the switch refuses endpoints that reach loopback (registered while it was on), by name and by literal, and records an error without a body; with the switch they are delivered', async () => {
    const shop = await open.merchant();
    const key = shop.test_secret_key;
    // An internal service on the host that answers with its secret to whoever asks.
    const r = await receiver({ status: 200, body: 'admin token: s3cr3t' });
    const byName = await createEndpoint(open.base, key, `http://localhost:${r.port}/by-name`, ['order.paid']);
    const byAddress = await createEndpoint(open.base, key, r.url('/by-address'), ['order.paid']);

    const refusing = await startDispatcher(false);
    const order = await createOrder(open.base, key);
    await payOrder(open.base, key, order.id);
    const eventId = await waitFor('the order.paid event', () => open.db.knex('events').where({ order_id: order.id, type: 'order.paid' }).first('id'), (row) => row !== undefined).then((row) => row.id as string);
    const refused = await waitFor(
      'a refused attempt to each endpoint',
      () => attemptsOf(open, key, eventId),
      (list) => [byName.id, byAddress.id].every((id) => list.some((a) => a.endpoint_id === id)),
      20_000,
      100,
    );
    const first = (id: string) => refused.find((a) => a.endpoint_id === id)!;
    expect(first(byName.id)).toMatchObject({ status_code: null, response_excerpt: '' });
    // Resolved, then refused on the address it would connect to; no connection was made.
    expect(first(byName.id).error).toMatch(/^refused: localhost resolves only to addresses webhooks may not reach \(.*127\.0\.0\.1 is a loopback address/);
    expect(first(byAddress.id)).toMatchObject({ status_code: null, error: 'refused: 127.0.0.1 is a loopback address', response_excerpt: '' });
    expect(r.requests).toHaveLength(0);
    expect(refused.every((a) => !a.response_excerpt.includes('s3cr3t'))).toBe(true);
    refusing.kill('SIGTERM');
    await new Promise((resolve) => refusing.once('exit', resolve));

    // The operator switches it on (local development): the retries go through.
    await startDispatcher(true);
    await waitFor('both endpoints to get the event', () => r.requests.map((x) => x.path).sort(), (paths) => paths.includes('/by-address') && paths.includes('/by-name'), 20_000, 50);
    const delivered = await waitFor('two successful attempts', () => attemptsOf(open, key, eventId), (list) => list.filter((a) => a.status_code === 200).length === 2, 10_000, 50);
    expect(delivered.filter((a) => a.status_code === 200).map((a) => a.response_excerpt)).toEqual(['admin token: s3cr3t', 'admin token: s3cr3t']);
  }, 90_000);

  test('the sender judges the address actually connected before a byte is sent, even when what came before let it through', async () => {
    // A raw TCP server on 127.0.0.1 that counts the bytes each connection sends.
    const received: number[] = [];
    const server = net.createServer((socket) => {
      const index = received.push(0) - 1;
      socket.on('data', (chunk: Buffer) => (received[index]! += chunk.length));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const port = (server.address() as net.AddressInfo).port;

    // The real policy, consulted one step late: it lets the first question (the check before connecting) through,
    // as a resolver answering differently or a future code path might, and answers truly from then on.
    const real = createAddressPolicy({ allowPrivateNetworks: false });
    let asked = 0;
    const late: AddressPolicy = { allowPrivateNetworks: false, refuseHost: real.refuseHost, refuseAddress: (address) => (asked++ === 0 ? undefined : real.refuseAddress(address)) };
    const sender = new NodeHttpWebhookSender(late);
    cleanups.push(async () => sender.close());

    const result = await sender.send({ url: `http://127.0.0.1:${port}/webhooks`, body: '{"id":"evt_x"}', headers: {}, livemode: false, timeoutMs: 2000 });
    expect(result).toMatchObject({ statusCode: null, error: 'refused: connected address 127.0.0.1 is a loopback address', excerpt: '' });
    expect(asked).toBe(2);
    await waitFor('the refused connection to reach the server', () => received.length, (n) => n === 1);
    expect(received).toEqual([0]);
  });

  test('the sender refuses a live delivery over http, and in either mode what the policy refuses, without connecting', async () => {
    const r = await receiver();
    const sender = new NodeHttpWebhookSender(createAddressPolicy({ allowPrivateNetworks: false }));
    cleanups.push(async () => sender.close());
    const send = (url: string, livemode: boolean) => sender.send({ url, body: '{"id":"evt_x"}', livemode, timeoutMs: 1000, headers: {} });
    for (const livemode of [false, true]) {
      expect(await send(`https://127.0.0.1:${r.port}/webhooks`, livemode)).toMatchObject({ statusCode: null, error: 'refused: 127.0.0.1 is a loopback address' });
      expect(await send(`https://[::ffff:127.0.0.1]:${r.port}/webhooks`, livemode)).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: ::ffff:7f00:1 is a loopback address/) });
      expect(await send(`https://localhost:${r.port}/webhooks`, livemode)).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: localhost resolves only to addresses webhooks may not reach/) });
    }
    expect(await send(`http://shop.example/webhooks`, true)).toMatchObject({ statusCode: null, error: 'live-mode endpoints must use https' });
    expect(r.requests).toHaveLength(0);
    // The same sender with the switch delivers to the receiver.
    const allowing = new NodeHttpWebhookSender(createAddressPolicy({ allowPrivateNetworks: true }));
    cleanups.push(async () => allowing.close());
    expect(await allowing.send({ url: `http://localhost:${r.port}/webhooks`, body: '{"id":"evt_x"}', livemode: false, timeoutMs: 1000, headers: {} })).toMatchObject({ statusCode: 200, error: null });
    expect(r.requests).toHaveLength(1);
  });
});

describe('endpoint cap', () => {
  test(`a merchant may have ${MAX_ENDPOINTS_PER_MODE} endpoints per mode, the default included: concurrent creates cannot pass it, deleted ones do not count, the other mode has its own`, async () => {
    expect(MAX_ENDPOINTS_PER_MODE).toBe(16);
    const shop = await strict.merchant();
    const key = shop.test_secret_key;
    const create = (i: number, k = key) => api<EndpointJson & ErrorJson>(strict.base, k, 'POST', '/v1/webhook_endpoints', { url: `https://shop.example/hooks/${i}`, enabled_events: ['order.paid'] });

    // 40 creates at once over the API's connection pool: exactly 15 fit next to the default endpoint.
    const results = await pool(40, 40, (i) => create(i));
    const statuses = results.map((res) => res.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_ENDPOINTS_PER_MODE - 1);
    expect(statuses.filter((s) => s === 422)).toHaveLength(40 - (MAX_ENDPOINTS_PER_MODE - 1));
    expect(await liveRows(strict, shop.merchant_id, false)).toBe(MAX_ENDPOINTS_PER_MODE);
    const refusal = results.find((res) => res.status === 422)!.json.error;
    expect(refusal).toMatchObject({ type: 'invalid_request_error', code: 'endpoint_limit_reached' });
    expect(refusal.message).toContain('16 webhook endpoints');
    expect(refusal.request_id).toEqual(expect.any(String));
    // Refused creates wrote nothing, secrets included.
    const secrets = await strict.db.knex('webhook_endpoint_secrets').join('webhook_endpoints', 'webhook_endpoints.id', 'webhook_endpoint_secrets.endpoint_id').where({ merchant_id: shop.merchant_id, livemode: false }).count<{ n: string }[]>('* as n');
    expect(Number(secrets[0]!.n)).toBe(MAX_ENDPOINTS_PER_MODE);

    // The 17th, one at a time, is refused too; after a delete there is room for one.
    expect((await create(100)).status).toBe(422);
    const made = results.find((res) => res.status === 201)!.json;
    expect((await api(strict.base, key, 'DELETE', `/v1/webhook_endpoints/${made.id}`)).status).toBe(200);
    expect((await create(101)).status).toBe(201);
    expect((await create(102)).status).toBe(422);

    // Live mode and other merchants have their own count.
    const live = await pool(MAX_ENDPOINTS_PER_MODE, 8, (i) => create(200 + i, shop.live_secret_key));
    expect(live.map((res) => res.status).sort()).toEqual([...Array(MAX_ENDPOINTS_PER_MODE - 1).fill(201), 422]);
    const other = await strict.merchant();
    expect((await create(300, other.test_secret_key)).status).toBe(201);
  });
});
