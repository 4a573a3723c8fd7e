// Stopping the processes an operator runs (`checkout serve`, `checkout worker`, `checkout dispatch`)
// with SIGTERM or SIGINT whatever state their dependencies are in: NATS unreachable from the start,
// NATS gone while running, Postgres refusing or hanging, a webhook receiver that never answers.
// Each process is real (node bin/checkout.ts) and every stop is awaited with a generous deadline,
// far above the SHUTDOWN_GRACE_MS it runs with: a process that does not stop fails it.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../src/composition/core.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { CuttablePostgres, type CuttablePostgresOptions } from './support/cuttable-postgres.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';
import { deleteStream, freePort, startOwnNatsServer, uniqueStream, type OwnNatsServer } from './support/nats-server.ts';
import { harnessNatsUrl, requires } from './support/requirements.ts';
import { api, createEndpoint, createOrder, Receiver, serviceEnv } from './support/webhooks.ts';
import { waitFor } from './support/wait.ts';
import { orderBody } from './support/order-fixtures.ts';
import { startTestService } from './support/service.ts';
import { rowToEvent, type EventRow } from '../src/modules/event/adapters/postgres/postgres-event-outbox.ts';
import { PostgresEventNotifications } from '../src/modules/event/adapters/postgres/postgres-event-notifications.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** What each process here is given to stop in. */
const GRACE_MS = 3000;
/** How long a test waits for a process to exit once signalled: many times the grace, on a busy machine. */
const EXIT_DEADLINE_MS = 30_000;

let db: TestDatabase;
let shop: SandboxCredentials;
const stream = uniqueStream();
const children = new Set<ChildProcess>();
let cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const core = createCore({ knex: db.knex, apiBaseUrl: 'http://127.0.0.1', checkoutHost: 'http://127.0.0.1', onInternalError: () => undefined });
  shop = (await core.createSandbox({ name: 'Shutdown shop', settlementCurrency: 'EUR' }))!;
});

afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  const pending = cleanups.reverse();
  cleanups = [];
  for (const cleanup of pending) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await db?.drop();
  await deleteStream(stream.stream);
});

/**
 * The environment of a process of this file: its database, its stream on the run's NATS (or, where the run has none,
 * events through Postgres), info logs, the short grace.
 */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return serviceEnv(db, stream, harnessNatsUrl(), { LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: String(GRACE_MS), ...extra });
}

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A `checkout` process of this file, its output kept. */
interface Running {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves once the output matches (60 s at most: Node starts slowly on a busy machine). */
  waitForOutput(pattern: RegExp, what: string): Promise<void>;
  /** Sends the signal and resolves with the exit; fails (SIGKILLing it) when it has not exited within EXIT_DEADLINE_MS. */
  stop(signal: NodeJS.Signals): Promise<Exit>;
  readonly exited: Promise<Exit>;
}

function start(args: string[], environment: Record<string, string>): Running {
  const child = spawn(process.execPath, ['bin/checkout.ts', ...args], { cwd: REPO, env: { ...process.env, ...environment }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  const keep = (chunk: Buffer) => (out = (out + chunk.toString()).slice(-200_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    async waitForOutput(pattern, what) {
      let exit: Exit | undefined;
      void exited.then((e) => (exit = e));
      await waitFor(what, () => (exit ? `exited ${JSON.stringify(exit)}` : pattern.test(out)), (found) => found === true || typeof found === 'string', 60_000, 50).then((found) => {
        if (found !== true) throw new Error(`checkout ${args.join(' ')} ${found} before ${what}:\n${out}`);
      });
    },
    async stop(signal) {
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          exited,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              child.kill('SIGKILL');
              reject(new Error(`checkout ${args.join(' ')} did not exit within ${EXIT_DEADLINE_MS} ms of ${signal}:\n${out.slice(-4000)}`));
            }, EXIT_DEADLINE_MS);
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** `checkout serve` on a free port; resolves once /readyz answers 200. */
async function serve(environment: Record<string, string>): Promise<Running & { readonly base: string }> {
  const port = await freePort();
  const running = start(['serve'], { ...environment, PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  await running.waitForOutput(/Checkout service listening on/, 'the listening line');
  await waitFor('serve ready', () => fetch(`${base}/readyz`).then((res) => res.status), (status) => status === 200, 60_000, 100);
  return { ...running, base };
}

/** A nats-server of the test's own, destroyed after it. */
async function ownNats(): Promise<OwnNatsServer> {
  const nats = await startOwnNatsServer();
  cleanups.push(() => nats.destroy());
  return nats;
}

/** A relay to Postgres the test cuts or hangs, closed after it. */
async function cuttablePostgres(options: CuttablePostgresOptions = {}): Promise<CuttablePostgres> {
  const relay = new CuttablePostgres(options);
  await relay.up();
  cleanups.push(() => relay.down());
  return relay;
}

/** A loopback port that accepts connections and closes each at once without a word (no NATS answers there); counts them. */
async function speechlessPort(): Promise<{ readonly url: string; readonly count: number }> {
  let count = 0;
  const server = net.createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `nats://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    url,
    get count() {
      return count;
    },
  };
}

const lines = (out: string, pattern: RegExp) => out.split('\n').filter((line) => pattern.test(line));

describe('checkout serve', { timeout: 180_000 }, () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('with NATS unreachable from the start, %s ends it with exit code 0', async (signal) => {
    const unreachable = `nats://127.0.0.1:${await freePort()}`;
    const running = await serve(env({ NATS_URL: unreachable }));
    expect(running.output()).toContain(`Cannot reach NATS at ${unreachable}`);

    const exit = await running.stop(signal);
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
    expect(lines(running.output(), /Stopped in \d+ ms"/)).toHaveLength(1);
    await expect(fetch(`${running.base}/healthz`)).rejects.toThrow();
  });

  it('with NATS gone while it runs, SIGTERM ends it with exit code 0', requires('nats-server'), async () => {
    const nats = await ownNats();
    const running = await serve(env({ NATS_URL: nats.url, NATS_STREAM: `${stream.stream}_OWN`, NATS_SUBJECT_PREFIX: `${stream.subjectPrefix}.own` }));
    await running.waitForOutput(/Dispatching webhooks of installation/, 'the dispatcher at work');
    await nats.stop();
    // An order's event waits in the outbox; the relay tries to publish it to the NATS that is gone.
    expect((await createOrder(running.base, shop.test_secret_key)).id).toMatch(/^ord_/);
    await running.waitForOutput(/outbox relay: publish failed; will retry/, 'a failed publish');

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
  });

  it('with Postgres refusing connections while it runs, SIGTERM ends it with exit code 0', async () => {
    const postgres = await cuttablePostgres();
    const running = await serve(env({ DATABASE_URL: postgres.url(db.url) }));
    await postgres.down();
    const refused = await api(running.base, shop.test_secret_key, 'GET', '/v1/orders');
    expect(refused.status).toBe(503);

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
  });

  it('with Postgres hanging while it runs and a request waiting on it, SIGTERM ends it when the grace runs out, with exit code 1', async () => {
    const postgres = await cuttablePostgres();
    // No workers: what reaches the hung Postgres is the request's (the workers hang in the tests below).
    const running = await serve(env({ DATABASE_URL: postgres.url(db.url), SERVE_WORKERS: 'none' }));
    postgres.hang();
    // A request whose query never gets its answer, still in flight when the grace runs out.
    const inFlight = fetch(`${running.base}/v1/orders`, { headers: { authorization: `Bearer ${shop.test_secret_key}` } }).then(
      (res) => res.status,
      () => 'cut',
    );
    await waitFor('the request waiting on Postgres', () => postgres.heard, (n) => n > 0, 30_000);

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 1, signal: null });
    expect(lines(running.output(), /Shutdown grace nearly spent \(SHUTDOWN_GRACE_MS=3000\): aborting what is still in hand: .*http \(requests in flight\)/)).toHaveLength(1);
    expect(lines(running.output(), /the grace exceeded: what was still in hand was abandoned/)).toHaveLength(1);
    expect(await inFlight).toBe('cut');
  });

  it('a second signal, while the stop waits for a Postgres that hangs, exits at once with exit code 1', async () => {
    const postgres = await cuttablePostgres();
    // A grace far longer than the test's deadline: only the second signal can end it in time.
    const running = await serve(env({ DATABASE_URL: postgres.url(db.url), SHUTDOWN_GRACE_MS: '600000', SERVE_WORKERS: 'none' }));
    postgres.hang();
    void fetch(`${running.base}/v1/orders`, { headers: { authorization: `Bearer ${shop.test_secret_key}` } }).catch(() => undefined);
    await waitFor('the request waiting on Postgres', () => postgres.heard, (n) => n > 0, 30_000);
    running.child.kill('SIGTERM');
    // The stop has begun once the listener is closed.
    await waitFor('the listener closed', () => fetch(`${running.base}/healthz`).then(() => 'open', () => 'closed'), (state) => state === 'closed', 30_000, 100);
    // A repeat within a second is taken for the same request (npm passes on the Ctrl-C the terminal also sent).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(running.child.exitCode).toBeNull();

    const exit = await running.stop('SIGINT');
    expect(exit, running.output()).toEqual({ code: 1, signal: null });
    expect(running.output()).toContain('checkout: SIGINT while stopping: exiting at once');
  });

  it('with a webhook receiver that hangs mid-delivery, SIGTERM aborts the send when the grace runs out and gives its lease back; the next start delivers it', async () => {
    const receiver = await Receiver.start(() => 'hang');
    cleanups.push(() => receiver.close());
    // A timeout and a lease far longer than the grace: only the stop can end the send in time.
    const webhookEnv = { WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_LEASE_MS: '120000' };
    const running = await serve(env(webhookEnv));
    const endpoint = await createEndpoint(running.base, shop.test_secret_key, receiver.url(), ['order.created']);
    const order = await createOrder(running.base, shop.test_secret_key);
    await waitFor('the delivery in flight', () => receiver.waiting().length, (n) => n === 1, 30_000);
    const [request] = receiver.requests;
    expect(request!.body.data.id).toBe(order.id);

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 1, signal: null });
    expect(lines(running.output(), /aborting what is still in hand: .*dispatcher/)).toHaveLength(1);
    expect(lines(running.output(), /webhook delivery aborted: the shutdown grace ran out mid-send; no attempt recorded, due again at once/)).toHaveLength(1);
    await waitFor('the receiver to see the send cut', () => request!.abortedAt, (at) => at !== undefined, 10_000);

    // Not an attempt, and due at once: the lease was given back rather than left to run out in two minutes.
    const [delivery] = await db.knex('webhook_deliveries').where({ endpoint_id: endpoint.id, event_id: request!.body.id });
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 0 });
    expect(new Date(delivery.next_attempt_at).getTime()).toBeLessThanOrEqual(Date.now());
    expect(await db.knex('webhook_delivery_attempts').where({ delivery_id: delivery.id })).toEqual([]);

    // Nothing is lost: the next start delivers it.
    receiver.behaviour = () => ({ status: 200 });
    const again = await serve(env(webhookEnv));
    await waitFor('the delivery again', () => receiver.acceptedIds(), (ids) => ids.has(request!.body.id), 30_000);
    await waitFor('the delivery recorded', () => db.knex('webhook_deliveries').where({ id: delivery.id }).first(), (row) => row?.status === 'succeeded', 30_000);
    expect((await again.stop('SIGTERM')).code).toBe(0);
  });
});

describe('checkout worker and checkout dispatch', { timeout: 180_000 }, () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('`checkout dispatch` with NATS unreachable from the start: %s ends it with exit code 0', async (signal) => {
    // A port where no NATS answers: every connection is closed at once, and counted, so the test sees the process try.
    const attempts = await speechlessPort();
    const running = start(['dispatch'], env({ NATS_URL: attempts.url }));
    await waitFor('a second attempt to reach NATS', () => attempts.count, (n) => n >= 2, 60_000, 50);
    expect(running.child.exitCode).toBeNull();

    const exit = await running.stop(signal);
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
  });

  it('`checkout worker --only relay,dispatcher` with NATS gone while it runs: SIGTERM ends it with exit code 0', requires('nats-server'), async () => {
    const nats = await ownNats();
    const running = start(['worker', '--only', 'relay,dispatcher'], env({ NATS_URL: nats.url, NATS_STREAM: `${stream.stream}_W`, NATS_SUBJECT_PREFIX: `${stream.subjectPrefix}.w` }));
    await running.waitForOutput(/Workers running: relay, dispatcher/, 'the workers at work');
    await nats.stop();

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
  });

  it('`checkout worker --only all` with Postgres hanging while it runs: SIGTERM ends it when the grace runs out, with exit code 1', async () => {
    const postgres = await cuttablePostgres();
    const running = start(['worker', '--only', 'all'], env({ DATABASE_URL: postgres.url(db.url) }));
    await running.waitForOutput(/Workers running: /, 'the workers at work');
    postgres.hang();
    // The relay polls the outbox every 20 ms: its next query never gets its answer.
    await waitFor('a worker waiting on Postgres', () => postgres.heard, (n) => n > 0, 30_000);

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 1, signal: null });
    expect(lines(running.output(), /aborting what is still in hand: .*relay/)).toHaveLength(1);
  });
});

describe('without NATS (events through the event stream in Postgres)', { timeout: 180_000 }, () => {
  /** This file's environment with NATS_URL empty: the relay, the dispatcher and their LISTEN connection work on Postgres. */
  const postgresEnv = (extra: Record<string, string> = {}) => env({ NATS_URL: '', ...extra });

  it.each(['SIGTERM', 'SIGINT'] as const)('`checkout serve` with a webhook just delivered through Postgres: %s ends it with exit code 0', async (signal) => {
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    const running = await serve(postgresEnv());
    await running.waitForOutput(/Dispatching webhooks of installation ins_\w+ from the event stream in Postgres/, 'the dispatcher at work on Postgres');
    expect(running.output()).toContain('events through Postgres, no NATS');
    await createEndpoint(running.base, shop.test_secret_key, receiver.url(), ['order.created']);
    // The relay, the dispatcher's consumer and its LISTEN connection are all at work when the signal comes.
    const order = await createOrder(running.base, shop.test_secret_key);
    await waitFor('the delivery', () => receiver.requests.some((r) => r.body.data.id === order.id), (found) => found, 30_000);

    const exit = await running.stop(signal);
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
    expect(lines(running.output(), /Stopped in \d+ ms"/)).toHaveLength(1);
    expect(lines(running.output(), /Shutdown grace/)).toEqual([]);
    await expect(fetch(`${running.base}/healthz`)).rejects.toThrow();
  });

  it('`checkout dispatch`: SIGTERM ends it with exit code 0', async () => {
    const running = start(['dispatch'], postgresEnv());
    await running.waitForOutput(/Dispatching webhooks of installation ins_\w+ from the event stream in Postgres/, 'the dispatcher at work on Postgres');

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
    expect(lines(running.output(), /Shutdown grace/)).toEqual([]);
  });

  it('`checkout worker --only relay,dispatcher` with Postgres refusing connections while it runs: SIGTERM ends it with exit code 0', async () => {
    const postgres = await cuttablePostgres();
    const running = start(['worker', '--only', 'relay,dispatcher'], postgresEnv({ DATABASE_URL: postgres.url(db.url) }));
    await running.waitForOutput(/Workers running: relay, dispatcher/, 'the workers at work');
    await postgres.down();
    // The LISTEN connection is lost and tried again; the relay and the consumer fail their looks and back off.
    await running.waitForOutput(/event stream: cannot LISTEN for new events in Postgres/, 'the LISTEN connection lost');

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
  });

  it('`checkout worker --only relay,dispatcher` with Postgres hanging while it runs: SIGTERM ends it when the grace runs out, with exit code 1', async () => {
    const postgres = await cuttablePostgres();
    const running = start(['worker', '--only', 'relay,dispatcher'], postgresEnv({ DATABASE_URL: postgres.url(db.url) }));
    await running.waitForOutput(/Workers running: relay, dispatcher/, 'the workers at work');
    postgres.hang();
    // The relay polls the outbox every 20 ms, the consumer the stream every 100 ms: their next queries never get an answer.
    await waitFor('the workers waiting on Postgres', () => postgres.heard, (n) => n > 0, 30_000);

    const exit = await running.stop('SIGTERM');
    expect(exit, running.output()).toEqual({ code: 1, signal: null });
    expect(lines(running.output(), /aborting what is still in hand: .*relay/)).toHaveLength(1);
  });
});

describe('closing the LISTEN connection of the event stream in Postgres (the last step of a stop without NATS)', () => {
  /** Resolves with what `closing` came to, or 'still waiting' once the deadline has passed: far beyond what a close that does not wait takes. */
  const within = (closing: Promise<void>, ms = 20_000) => {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([closing.then(() => 'closed'), new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)))]).finally(() => clearTimeout(timer));
  };

  it('cuts an attempt to connect that Postgres never answers, rather than wait for the connect timeout', async () => {
    const postgres = await cuttablePostgres();
    postgres.hang();
    // A connect timeout far beyond the test's deadline: only close() can end the attempt in time.
    const notifications = new PostgresEventNotifications(postgres.url(db.url), { connectTimeoutMs: 600_000 });
    notifications.subscribe(() => undefined);
    await waitFor('the attempt to connect', () => postgres.heard, (n) => n > 0, 30_000);

    expect(await within(notifications.close())).toBe('closed');
    expect(await notifications.listening()).toBe(false);
  });

  it('once the stop abandons it, cuts a connection whose goodbye Postgres never answers', async () => {
    const postgres = await cuttablePostgres({ hangHalfOpen: true });
    const notifications = new PostgresEventNotifications(postgres.url(db.url));
    notifications.subscribe(() => undefined);
    expect(await notifications.listening()).toBe(true);
    postgres.hang();
    const abandon = new AbortController();
    const closing = notifications.close(abandon.signal);

    abandon.abort();
    expect(await within(closing)).toBe('closed');
  });
});

describe('giving a lease back (what a dispatcher does with a send it aborted)', () => {
  it('makes the delivery due at once with no attempt counted, and never takes back a lease that ran out and went to another dispatcher', async () => {
    const svc = await startTestService({ webhookAllowPrivateNetworks: true });
    cleanups.push(() => svc.close());
    const merchant = await svc.sandbox('Lease shop');
    const call = (url: string, body: unknown) =>
      svc.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${merchant.test_secret_key}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    // Nothing runs a dispatcher here: port 9 (discard) is never sent to.
    expect((await call('/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', enabled_events: ['order.created'] })).statusCode).toBe(201);
    expect((await call('/v1/orders', orderBody())).statusCode).toBe(201);
    const [row] = await svc.db.knex<EventRow>('events').where({ merchant_id: merchant.merchant_id, type: 'order.created' });
    const queue = svc.core.webhookQueue;
    const t0 = new Date(Date.now() + 1000);
    expect(await queue.enqueue(rowToEvent(row!), '{}', t0)).toEqual({ known: true, queued: 1 });
    const claim = (now: Date) => queue.claimDue({ limit: 10, perEndpoint: 10, excludeEndpoints: [], leaseMs: 60_000, now });
    const stateOf = async (id: string) => {
      const delivery = await svc.db.knex('webhook_deliveries').where({ id }).first();
      return { status: delivery.status, attempt_count: delivery.attempt_count, next_attempt_at: new Date(delivery.next_attempt_at).getTime() };
    };

    const [first] = await claim(t0);
    expect(first!.leaseUntil).toEqual(new Date(t0.getTime() + 60_000));
    const releasedAt = new Date(t0.getTime() + 5000);
    expect(await queue.release(first!, releasedAt)).toBe(true);
    expect(await stateOf(first!.id)).toEqual({ status: 'pending', attempt_count: 0, next_attempt_at: releasedAt.getTime() });

    // Claimed again; its lease runs out and another dispatcher takes it: the late release changes nothing.
    const [second] = await claim(releasedAt);
    const later = new Date(second!.leaseUntil.getTime() + 1000);
    const [third] = await claim(later);
    expect(third!.id).toBe(second!.id);
    expect(await queue.release(second!, later)).toBe(false);
    expect(await stateOf(third!.id)).toEqual({ status: 'pending', attempt_count: 0, next_attempt_at: third!.leaseUntil.getTime() });
    expect(await svc.db.knex('webhook_delivery_attempts').where({ delivery_id: third!.id })).toEqual([]);
  });
});
