// Helpers of the webhook tests: a real HTTP receiver on 127.0.0.1 whose answers each test scripts,
// the whole service started in this process on its own database and stream, and REST shortcuts.
import { spawn, type ChildProcess } from 'node:child_process';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect } from 'nats';
import { loadConfig, type Config, type EventsMode } from '../../src/composition/config.ts';
import { startService, type RunningService } from '../../server/service.ts';
import type { SandboxCredentials } from '../../src/modules/merchant/application/create-sandbox.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { MACHINE_NATS_URL, uniqueStream } from './nats-server.ts';
import { orderBody } from './order-fixtures.ts';
import { harnessEventsMode } from './requirements.ts';
import { waitFor } from './wait.ts';

// ---------------------------------------------------------------- receiver

/** One POST that reached a receiver. */
export interface ReceivedRequest {
  /** Wall clock (Date.now()) and monotonic (performance.now()) arrival of the complete body. */
  readonly at: number;
  readonly hr: number;
  readonly method: string;
  readonly path: string;
  readonly raw: Buffer;
  readonly headers: http.IncomingHttpHeaders;
  /** Checkout-Signature header value. */
  readonly signature: string;
  /** The parsed body (not verified: tests verify raw with the SDK). */
  readonly body: { id: string; type: string; created: string; livemode: boolean; sequence: number; data: Record<string, unknown> };
  /** How many earlier requests this receiver got for the same event id. */
  readonly nth: number;
  /** The sender's port of the connection (which process sent it: see test/support/processes.ts). */
  readonly remotePort: number;
  /** Status written, once answered; undefined while hanging or when the client went away first. */
  answered?: number;
  /** Set when the receiver starts writing its answer: until then the sender cannot have had one. */
  replying?: boolean;
  /** performance.now() when the client closed the request without waiting for an answer. */
  abortedAt?: number;
}

/** What the receiver does with a request. */
export type Answer = { status: number; delayMs?: number; body?: string } | 'hang';
export type Behaviour = (request: ReceivedRequest) => Answer;

/** A node:http server on 127.0.0.1 recording every request, answering as `behaviour` says (200 by default). */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  behaviour: Behaviour;
  /** Requests received and not answered yet (including hanging ones). */
  open = 0;
  maxOpen = 0;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #counts = new Map<string, number>();
  #port = 0;

  private constructor(behaviour: Behaviour) {
    this.behaviour = behaviour;
    this.#server = http.createServer((req, res) => this.#handle(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(behaviour: Behaviour = () => ({ status: 200 })): Promise<Receiver> {
    const receiver = new Receiver(behaviour);
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    receiver.#port = (receiver.#server.address() as AddressInfo).port;
    return receiver;
  }

  get port(): number {
    return this.#port;
  }

  /** The URL to register as an endpoint. */
  url(path = '/webhooks'): string {
    return `http://127.0.0.1:${this.#port}${path}`;
  }

  /** Requests of one event, in arrival order. */
  of(eventId: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.body.id === eventId);
  }

  /** Distinct event ids received. */
  ids(): Set<string> {
    return new Set(this.requests.map((r) => r.body.id));
  }

  /** Requests the sender is still waiting on: no answer started, connection still open. */
  waiting(): ReceivedRequest[] {
    return this.requests.filter((r) => !r.replying && r.abortedAt === undefined);
  }

  /** Distinct event ids this receiver answered 2xx. */
  acceptedIds(): Set<string> {
    return new Set(this.requests.filter((r) => r.answered !== undefined && r.answered >= 200 && r.answered < 300).map((r) => r.body.id));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: ReceivedRequest['body'];
      try {
        body = JSON.parse(raw.toString('utf8')) as ReceivedRequest['body'];
      } catch {
        body = { id: '(not json)', type: '', created: '', livemode: false, sequence: 0, data: {} };
      }
      const nth = this.#counts.get(body.id) ?? 0;
      this.#counts.set(body.id, nth + 1);
      const request: ReceivedRequest = {
        at: Date.now(),
        hr: performance.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        raw,
        headers: req.headers,
        signature: String(req.headers['checkout-signature'] ?? ''),
        body,
        nth,
        remotePort: req.socket.remotePort ?? 0,
      };
      this.requests.push(request);
      this.open += 1;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      let done = false;
      const close = () => {
        if (done) return;
        done = true;
        this.open -= 1;
      };
      res.once('close', () => {
        if (request.answered === undefined) request.abortedAt = performance.now();
        close();
      });
      const answer = this.behaviour(request);
      if (answer === 'hang') return;
      const reply = () => {
        if (res.destroyed) return;
        request.replying = true;
        res.writeHead(answer.status, { 'content-type': 'text/plain' });
        res.end(answer.body ?? '', () => {
          request.answered = answer.status;
          close();
        });
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------- service

/** The service running in this process over its own database and JetStream stream (or, without NATS, the database's event stream). */
export interface Harness {
  readonly service: RunningService;
  readonly db: TestDatabase;
  readonly config: Config;
  /** How its events travel (see HarnessOptions.events). */
  readonly events: EventsMode;
  readonly base: string;
  /** A sandbox with test and live keys (created after start; the first start's own has test keys only). */
  readonly sandbox: SandboxCredentials;
  /** A further sandbox merchant of its own (isolates a test's deliveries). */
  merchant(name?: string): Promise<SandboxCredentials>;
  close(): Promise<void>;
}

/**
 * The environment the service (and `checkout dispatch`) reads, with a short retry schedule and loopback receivers
 * allowed. No natsUrl: events travel through Postgres (NATS_URL is set empty, so that a NATS_URL of the test's own
 * environment does not reach a child process).
 */
export function serviceEnv(db: TestDatabase, stream: { stream: string; subjectPrefix: string }, natsUrl: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    // Test files run side by side; keep their connections well under Postgres's max_connections.
    DATABASE_POOL_MAX: '10',
    NATS_URL: natsUrl ?? '',
    NATS_STREAM: stream.stream,
    NATS_SUBJECT_PREFIX: stream.subjectPrefix,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_BASE_MS: '200',
    WEBHOOK_RETRY_CAP_MS: '1000',
    RUN_DISPATCHER: 'true',
    // The receivers listen on 127.0.0.1, which the address policy refuses unless the operator allows it.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // These suites flood one key with orders on purpose; the per-key rate limit has a suite of its own.
    RATE_LIMIT_PER_SECOND: '0',
    ...extra,
  };
}

/** The events' modes every transport-dependent suite runs in: NATS JetStream, and the event stream in Postgres. */
export const EVENTS_MODES: readonly EventsMode[] = ['nats', 'postgres-outbox'];

/** What {@link startHarness} takes. */
export interface HarnessOptions {
  /**
   * How events travel: `nats` (natsUrl, or the run's NATS) or `postgres-outbox` (no NATS_URL). By default `nats` when
   * natsUrl is given or the run's NATS answers, else `postgres-outbox` ({@link harnessEventsMode}).
   */
  readonly events?: EventsMode;
  readonly natsUrl?: string;
  readonly env?: Record<string, string>;
  readonly logDestination?: { write(line: string): void };
}

/** Starts the whole service (gateway, relay, dispatcher unless RUN_DISPATCHER=false) on a fresh database and stream. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const events = options.events ?? (options.natsUrl !== undefined ? 'nats' : harnessEventsMode());
  const natsUrl = events === 'postgres-outbox' ? undefined : (options.natsUrl ?? MACHINE_NATS_URL);
  // Migrated already (a copy of the run's template): the service's own migration at start then has nothing to do.
  // Starting on an empty database, migrations and the first sandbox included, is the suites' that pass migrate: false.
  const db = await createTestDatabase();
  const stream = uniqueStream();
  const config = loadConfig(serviceEnv(db, stream, natsUrl, options.env));
  const service = await startService(config, { logDestination: options.logDestination });
  if (!service.firstSandbox) throw new Error('a fresh database should have created the first sandbox');
  const sandbox = await service.core.createSandbox({ name: 'Harness shop', settlementCurrency: 'EUR' });
  let n = 0;
  return {
    service,
    db,
    config,
    events,
    base: `http://127.0.0.1:${service.port}`,
    sandbox,
    merchant: (name) => service.core.createSandbox({ name: name ?? `Webhook shop ${++n}`, settlementCurrency: 'EUR' }),
    async close() {
      await service.close();
      await db.drop();
      // The stream lives on a NATS that outlives the test.
      if (natsUrl === undefined) return;
      const nc = await connect({ servers: natsUrl, timeout: 2000 }).catch(() => undefined);
      if (nc) {
        const jsm = await nc.jetstreamManager().catch(() => undefined);
        await jsm?.streams.delete(stream.stream).catch(() => undefined);
        await nc.close();
      }
    },
  };
}

// ---------------------------------------------------------------- reading what was delivered

/** The v1 parts of a Checkout-Signature header. */
export function v1Parts(header: string): string[] {
  return header
    .split(',')
    .filter((p) => p.startsWith('v1='))
    .map((p) => p.slice(3));
}

/** The t= part of a Checkout-Signature header. */
export function timestampOf(header: string): number {
  return Number(/(?:^|,)t=(\d+)/.exec(header)?.[1]);
}

/** A delivery attempt as GET /v1/events/:id/deliveries shows it. */
export interface AttemptJson {
  id: string;
  event_id: string;
  endpoint_id: string;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string;
}

/**
 * Shortcuts over the harness a test file runs (read when called, so a file may start it in beforeAll):
 * an event's delivery attempts, an order's event row, an endpoint's deliveries, a paid order.
 */
export function deliveryHelpers(current: () => Harness) {
  /** The delivery attempts of an event (GET /v1/events/:id/deliveries, 200 expected). */
  async function attemptsOf(key: string, eventId: string): Promise<AttemptJson[]> {
    const res = await api<{ data: AttemptJson[] }>(current().base, key, 'GET', `/v1/events/${eventId}/deliveries`);
    if (res.status !== 200) throw new Error(`listing the deliveries of ${eventId} answered ${res.status}: ${JSON.stringify(res.json)}`);
    return res.json.data;
  }
  /** The event row of one order and type, once it is there. */
  async function eventOf(orderId: string, type: string): Promise<{ id: string; created_at: Date; sequence: number }> {
    return waitFor(`${type} of ${orderId}`, () => current().db.knex('events').where({ order_id: orderId, type }).first(), (row) => row !== undefined);
  }
  /** An endpoint's deliveries, oldest first. */
  async function deliveryRows(endpointId: string, harness = current()): Promise<{ event_id: string; status: string; attempt_count: number }[]> {
    return harness.db.knex('webhook_deliveries').where({ endpoint_id: endpointId }).select('event_id', 'status', 'attempt_count').orderBy('id');
  }
  /** Creates an order, pays it, and answers the order and its order.paid event id. */
  async function paidOrder(key: string, reference = `INV-${Math.random().toString(36).slice(2, 8)}`) {
    const order = await createOrder(current().base, key, { reference });
    const paid = await payOrder(current().base, key, order.id);
    const event = await eventOf(order.id, 'order.paid');
    return { order, paid, eventId: event.id, event };
  }
  return { attemptsOf, eventOf, deliveryRows, paidOrder };
}

// ---------------------------------------------------------------- REST

/** A JSON API call; answers the status and parsed body. */
export async function api<T = Record<string, unknown>>(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as T };
}

export interface EndpointJson {
  id: string;
  object: string;
  url: string | null;
  enabled_events: string[];
  description: string;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  is_default: boolean;
  livemode: boolean;
  created: string;
  secret?: string;
}

/** Creates an endpoint (201 expected); answers it with its secret. */
export async function createEndpoint(base: string, key: string, url: string, enabledEvents: string[]): Promise<EndpointJson & { secret: string }> {
  const res = await api<EndpointJson & { secret: string }>(base, key, 'POST', '/v1/webhook_endpoints', { url, enabled_events: enabledEvents });
  if (res.status !== 201) throw new Error(`create endpoint answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json;
}

export interface OrderJson {
  id: string;
  reference: string;
  amount: number;
  currency: string;
  status: string;
  method: string | null;
  settlement: { currency: string; amount: number } | null;
}

/** Creates an order (201 expected). */
export async function createOrder(base: string, key: string, overrides: Record<string, unknown> = {}): Promise<OrderJson> {
  const res = await api<OrderJson>(base, key, 'POST', '/v1/orders', orderBody(overrides));
  if (res.status !== 201) throw new Error(`create order answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json;
}

/** Pays an order by a simulated bank transfer (200 expected). */
export async function payOrder(base: string, key: string, orderId: string): Promise<OrderJson> {
  const res = await api<OrderJson>(base, key, 'POST', `/v1/test_helpers/orders/${orderId}/simulate_transfer`);
  if (res.status !== 200) throw new Error(`simulate_transfer answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json;
}

/** Runs fn for 0..n-1 with at most `concurrency` at once; answers the results in order. */
export async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        results[i] = await fn(i);
      }
    }),
  );
  return results;
}

/**
 * Runs `checkout dispatch` with env on top of this process's environment;
 * resolves once it says it is dispatching (60 s at most: a busy machine is slow to start Node).
 * The caller stops it.
 */
export function spawnDispatcher(env: Record<string, string>): Promise<ChildProcess> {
  return spawnCheckout(['dispatch'], env, 'Dispatching webhooks');
}

/** Runs `checkout <args>` with env on top of this process's environment; resolves once its output shows `ready`. The caller stops it. */
export async function spawnCheckout(args: readonly string[], env: Record<string, string>, ready: string): Promise<ChildProcess> {
  const repo = fileURLToPath(new URL('../..', import.meta.url));
  // Ready is told by an info line (JSON, on stdout): the service environment's LOG_LEVEL=silent would hide it.
  const child = spawn(process.execPath, ['bin/checkout.ts', ...args], { cwd: repo, env: { ...process.env, ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`checkout ${args.join(' ')} did not start within 60 s: ${out}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`checkout ${args.join(' ')} exited (${signal ?? code}): ${out}`));
    });
  });
  return child;
}
