// Slow and greedy clients against the real service (startService, its listener, real Postgres and
// NATS when the run has it, else events through Postgres), with the connection limits lowered by configuration: connections that trickle bytes are
// closed within the documented timeouts on every path (HTTP/1.1, the HTTP/2 preface, h2c streams)
// while ordinary requests keep succeeding; MAX_CONNECTIONS refuses the connection over the cap; a
// server stream outlives every timeout.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventService } from '../src/gen/checkout/v1/webhook_pb.ts';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { orderBody } from './support/order-fixtures.ts';
import { createTestDatabase } from './support/database.ts';
import { sleep, waitFor } from './support/wait.ts';
import { httpRequest, parseRawResponse } from './support/raw-http.ts';
import { createOrder, startHarness, type Harness } from './support/webhooks.ts';
import { harnessNatsUrl } from './support/requirements.ts';
import { deleteStream, uniqueStream } from './support/nats-server.ts';

const HEADERS_TIMEOUT_MS = 1500;
const REQUEST_TIMEOUT_MS = 3000;
const KEEP_ALIVE_TIMEOUT_MS = 2000;
/** Node keeps an idle HTTP/1.1 connection this much longer than the Keep-Alive timeout it advertises. */
const NODE_KEEP_ALIVE_BUFFER_MS = 1000;
/** Slack for timers on a busy machine: a connection must be closed by the timeout plus this, never before the timeout. */
const MARGIN_MS = 10_000;
/** Date.now() and the server's timers read different clocks; allow this much disagreement on the lower bound. */
const CLOCK_SKEW_MS = 25;
const TRICKLE_EVERY_MS = 500;

const LIMITS_ENV = {
  HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
  HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
  RUN_DISPATCHER: 'false',
};

/** Every socket and session a test opens; afterEach destroys what is left. */
const opened = new Set<{ destroy(): void }>();
afterEach(() => {
  for (const socket of opened) socket.destroy();
  opened.clear();
});

/** What one slow client saw. */
interface Trickler {
  readonly kind: string;
  /**
   * When the client began to connect: no server deadline can start before it (the service runs in
   * this process, so the server may accept before the client's own 'connect' callback runs).
   */
  readonly startedAt: number;
  /** When the client received its first byte of answer. */
  answeredAt?: number;
  closedAt?: number;
  received: Buffer[];
  readonly closed: Promise<void>;
}

/**
 * Opens a TCP connection that sends `first` at once, then one byte of
 * `rest` every TRICKLE_EVERY_MS (cycling when `cycle`), until the server
 * closes it.
 */
function trickle(port: number, kind: string, first: string, rest: string, cycle: boolean): Trickler {
  const startedAt = Date.now();
  const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
  opened.add(socket);
  let timer: NodeJS.Timeout | undefined;
  let resolveClosed!: () => void;
  const t: Trickler = { kind, startedAt, received: [], closed: new Promise<void>((resolve) => (resolveClosed = resolve)) };
  socket.once('connect', () => {
    if (first) socket.write(first);
    let i = 0;
    if (rest) {
      timer = setInterval(() => {
        if (i >= rest.length && !cycle) return;
        socket.write(rest[i % rest.length]!);
        i += 1;
      }, TRICKLE_EVERY_MS);
    }
  });
  socket.on('data', (chunk: Buffer) => {
    t.answeredAt ??= Date.now();
    t.received.push(chunk);
  });
  socket.on('error', () => undefined);
  socket.once('close', () => {
    t.closedAt = Date.now();
    clearInterval(timer);
    opened.delete(socket);
    resolveClosed();
  });
  return t;
}

/** An h2c client whose one stream sends its request body a byte at a time. */
interface StreamTrickler {
  openedAt: number;
  streamClosedAt?: number;
  rstCode?: number;
  sessionClosedAt?: number;
  readonly closed: Promise<void>;
}

function trickleH2Stream(port: number): StreamTrickler {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  opened.add(session);
  session.on('error', () => undefined);
  let resolveClosed!: () => void;
  const t: StreamTrickler = { openedAt: Date.now(), closed: new Promise<void>((resolve) => (resolveClosed = resolve)) };
  const stream = session.request({ ':method': 'POST', ':path': '/checkout.v1.OrderService/CreateOrder', 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => undefined);
  stream.resume();
  const timer = setInterval(() => {
    if (!stream.destroyed) stream.write(Buffer.from([0]));
  }, TRICKLE_EVERY_MS);
  stream.once('close', () => {
    clearInterval(timer);
    t.streamClosedAt = Date.now();
    t.rstCode = stream.rstCode;
  });
  session.once('close', () => {
    clearInterval(timer);
    t.sessionClosedAt = Date.now();
    opened.delete(session);
    resolveClosed();
  });
  return t;
}

/** One round of what ordinary clients do: REST liveness, an authenticated order, and the order read over Connect and gRPC. */
async function ordinaryRound(port: number, key: string): Promise<string[]> {
  const failures: string[] = [];
  const health = await httpRequest(port, 'GET', '/healthz').catch((err: Error) => ({ status: 0, body: err.message }));
  if (health.status !== 200) failures.push(`GET /healthz: ${health.status} ${health.body}`);
  const created = await httpRequest(port, 'POST', '/v1/orders', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, JSON.stringify(orderBody({ reference: 'ordinary' }))).catch(
    (err: Error) => ({ status: 0, body: err.message }),
  );
  if (created.status !== 201) {
    failures.push(`POST /v1/orders: ${created.status} ${created.body}`);
    return failures;
  }
  const id = (JSON.parse(created.body) as { id: string }).id;
  const headers = { authorization: `Bearer ${key}` };
  const baseUrl = `http://127.0.0.1:${port}`;
  const connect = createClient(OrderService, createConnectTransport({ baseUrl, httpVersion: '1.1', nodeOptions: { agent: new http.Agent({ keepAlive: false }) } }));
  await connect.getOrder({ id }, { headers }).catch((err: Error) => failures.push(`Connect GetOrder: ${err.message}`));
  const sessions = new Http2SessionManager(baseUrl);
  try {
    const grpc = createClient(OrderService, createGrpcTransport({ baseUrl, sessionManager: sessions }));
    await grpc.getOrder({ id }, { headers }).catch((err: Error) => failures.push(`gRPC GetOrder: ${err.message}`));
  } finally {
    sessions.abort();
  }
  return failures;
}

// ---------------------------------------------------------------------------------------------

describe('slow clients', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: LIMITS_ENV });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('closes 325 trickling connections on every path within the documented timeouts while ordinary requests succeed', async () => {
    const port = h.service.port;
    const key = h.sandbox.test_secret_key;
    const preface = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
    const bodyHead =
      'POST /v1/orders HTTP/1.1\r\nHost: 127.0.0.1\r\n' + `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n` + '{"reference": "';
    const tricklers: Trickler[] = [];
    const streams: StreamTrickler[] = [];
    for (let i = 0; i < 100; i++) tricklers.push(trickle(port, 'h1-headers', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 'a', true));
    for (let i = 0; i < 50; i++) tricklers.push(trickle(port, 'h1-body', bodyHead, 'a', true));
    for (let i = 0; i < 25; i++) tricklers.push(trickle(port, 'h1-idle-keep-alive', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', '', false));
    for (let i = 0; i < 50; i++) tricklers.push(trickle(port, 'silent', '', '', false));
    for (let i = 0; i < 50; i++) tricklers.push(trickle(port, 'h2-preface-trickle', '', preface, false));
    for (let i = 0; i < 25; i++) tricklers.push(trickle(port, 'h2-settings-missing', preface.slice(0, 16), preface.slice(16), false));
    for (let i = 0; i < 25; i++) streams.push(trickleH2Stream(port));

    // Ordinary traffic until every slow client is gone.
    let done = false;
    const allClosed = Promise.all([...tricklers.map((t) => t.closed), ...streams.map((s) => s.closed)]).then(() => (done = true));
    const failures: string[] = [];
    let rounds = 0;
    const deadline = Date.now() + REQUEST_TIMEOUT_MS + KEEP_ALIVE_TIMEOUT_MS + MARGIN_MS + 5000;
    while (!done && Date.now() < deadline) {
      failures.push(...(await ordinaryRound(port, key)));
      rounds += 1;
      await sleep(200);
    }
    await Promise.race([allClosed, sleep(Math.max(0, deadline - Date.now()))]);

    expect(failures).toEqual([]);
    expect(rounds).toBeGreaterThanOrEqual(3);
    const open = tricklers.filter((t) => t.closedAt === undefined).map((t) => t.kind);
    expect(open, 'connections the server never closed').toEqual([]);
    expect(streams.filter((s) => s.sessionClosedAt === undefined)).toEqual([]);

    const lifetimes = (kind: string) => tricklers.filter((t) => t.kind === kind).map((t) => t.closedAt! - t.startedAt);
    const within = (values: number[], min: number, max: number) => {
      expect(values.length).toBeGreaterThan(0);
      for (const value of values) {
        expect(value).toBeGreaterThanOrEqual(min - CLOCK_SKEW_MS);
        expect(value).toBeLessThanOrEqual(max);
      }
    };
    // Headers: HTTP_HEADERS_TIMEOUT_MS from the request's first byte, then a 408 with the documented body.
    within(lifetimes('h1-headers'), HEADERS_TIMEOUT_MS, HEADERS_TIMEOUT_MS + MARGIN_MS);
    // Body: the whole request within HTTP_REQUEST_TIMEOUT_MS of its first byte.
    within(lifetimes('h1-body'), REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS + MARGIN_MS);
    // Nothing sent, or an HTTP/2 preface too slow to be recognised: HTTP_HEADERS_TIMEOUT_MS from connecting.
    within(lifetimes('silent'), HEADERS_TIMEOUT_MS, HEADERS_TIMEOUT_MS + MARGIN_MS);
    within(lifetimes('h2-preface-trickle'), HEADERS_TIMEOUT_MS, HEADERS_TIMEOUT_MS + MARGIN_MS);
    // A recognised h2c connection must finish its preface and SETTINGS within HTTP_HEADERS_TIMEOUT_MS.
    within(lifetimes('h2-settings-missing'), HEADERS_TIMEOUT_MS, HEADERS_TIMEOUT_MS + MARGIN_MS);
    // Idle keep-alive: closed HTTP_KEEP_ALIVE_TIMEOUT_MS (plus Node's grace) after the response.
    const idle = tricklers.filter((t) => t.kind === 'h1-idle-keep-alive');
    within(
      idle.map((t) => t.closedAt! - t.answeredAt!),
      KEEP_ALIVE_TIMEOUT_MS,
      KEEP_ALIVE_TIMEOUT_MS + NODE_KEEP_ALIVE_BUFFER_MS + MARGIN_MS,
    );
    for (const t of idle) expect(parseRawResponse(Buffer.concat(t.received).toString('latin1'))?.status).toBe(200);
    // A stream still sending its request after HTTP_REQUEST_TIMEOUT_MS is reset (CANCEL); the then idle session is closed.
    for (const s of streams) {
      expect(s.rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
      expect(s.streamClosedAt! - s.openedAt).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - CLOCK_SKEW_MS);
      expect(s.streamClosedAt! - s.openedAt).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS + MARGIN_MS);
      expect(s.sessionClosedAt! - s.streamClosedAt!).toBeLessThanOrEqual(KEEP_ALIVE_TIMEOUT_MS + MARGIN_MS);
    }

    // The HTTP/1.1 clients were told why, in the documented error body.
    for (const t of tricklers.filter((x) => x.kind === 'h1-headers' || x.kind === 'h1-body')) {
      const res = parseRawResponse(Buffer.concat(t.received).toString('latin1'));
      expect(res?.status).toBe(408);
      const body = JSON.parse(res!.body) as { error: Record<string, unknown> };
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout', request_id: res!.headers['request-id'] });
    }
    // The others were not answered at all.
    for (const t of tricklers.filter((x) => x.kind === 'silent' || x.kind === 'h2-preface-trickle')) expect(t.received).toEqual([]);
  });

  it('resets an h2c response the client never takes (no flow-control window), then closes the idle session', async () => {
    const startedAt = Date.now();
    const session = http2.connect(h.base, { settings: { initialWindowSize: 0 } });
    opened.add(session);
    const sessionClosed = new Promise<number>((resolve) => session.once('close', () => resolve(Date.now())));
    session.on('error', () => undefined);
    const stream = session.request({ ':method': 'POST', ':path': '/checkout.v1.CheckoutService/GetCheckout', 'content-type': 'application/json' });
    stream.on('error', () => undefined);
    stream.end('{"checkoutId":"nope"}');
    const streamClosed = await new Promise<{ at: number; code: number }>((resolve) => stream.once('close', () => resolve({ at: Date.now(), code: stream.rstCode })));
    expect(streamClosed.code).toBe(http2.constants.NGHTTP2_CANCEL);
    expect(streamClosed.at - startedAt).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - CLOCK_SKEW_MS);
    expect(streamClosed.at - startedAt).toBeLessThan(REQUEST_TIMEOUT_MS + MARGIN_MS);
    const closedAt = await sessionClosed;
    expect(closedAt - streamClosed.at).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS + MARGIN_MS);
  });

  it('does not cut a server stream (ListenEvents) that outlives every timeout, over HTTP/1.1 or h2c', async () => {
    const headers = { authorization: `Bearer ${h.sandbox.test_secret_key}` };
    const baseUrl = h.base;
    const sessions = new Http2SessionManager(baseUrl);
    const aborts = [new AbortController(), new AbortController()];
    try {
      const clients = [
        createClient(EventService, createConnectTransport({ baseUrl, httpVersion: '1.1' })),
        createClient(EventService, createGrpcTransport({ baseUrl, sessionManager: sessions })),
      ];
      const iterators = clients.map((client, i) => client.listenEvents({}, { headers, signal: aborts[i]!.signal })[Symbol.asyncIterator]());
      for (const iterator of iterators) expect((await iterator.next()).value?.signingSecret).toBe(h.sandbox.webhook_secret);
      // Longer than the header, request and keep-alive timeouts together.
      await sleep(HEADERS_TIMEOUT_MS + REQUEST_TIMEOUT_MS + KEEP_ALIVE_TIMEOUT_MS + NODE_KEEP_ALIVE_BUFFER_MS + 500);
      const order = await createOrder(h.base, h.sandbox.test_secret_key, { reference: 'still-listening' });
      for (const iterator of iterators) {
        const next = await iterator.next();
        expect(next.done).toBe(false);
        expect(next.value).toMatchObject({ type: 'order.created' });
        expect(JSON.parse(next.value!.body).data.id).toBe(order.id);
      }
    } finally {
      for (const abort of aborts) abort.abort();
      sessions.abort();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('MAX_CONNECTIONS', () => {
  let h: Harness;
  beforeAll(async () => {
    // Header timeout long enough that the idle connections below stay until the test closes them.
    h = await startHarness({ env: { ...LIMITS_ENV, HTTP_HEADERS_TIMEOUT_MS: '60000', HTTP_REQUEST_TIMEOUT_MS: '60000', MAX_CONNECTIONS: '50' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const serverConnections = () => new Promise<number>((resolve, reject) => h.service.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  it('refuses the 51st connection at once, and serves again once connections free up', async () => {
    const port = h.service.port;
    let drops = 0;
    h.service.app.server.on('drop', () => (drops += 1));
    const held: net.Socket[] = [];
    for (let i = 0; i < 50; i++) {
      const socket = net.connect({ port, host: '127.0.0.1' });
      socket.on('error', () => undefined);
      opened.add(socket);
      held.push(socket);
    }
    await waitFor('50 connections held by the server', serverConnections, (n) => n === 50);

    // The 51st: accepted by the kernel, closed by the service before it reads a byte, with no answer.
    const refused = await new Promise<{ data: string; closed: boolean }>((resolve) => {
      let data = '';
      const socket = net.connect({ port, host: '127.0.0.1' }, () => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
      opened.add(socket);
      socket.on('data', (chunk) => (data += chunk));
      socket.on('error', () => undefined);
      socket.once('close', () => resolve({ data, closed: true }));
    });
    expect(refused).toEqual({ data: '', closed: true });
    expect(drops).toBeGreaterThanOrEqual(1);
    await expect(httpRequest(port, 'GET', '/healthz')).rejects.toThrow();

    for (const socket of held.slice(0, 10)) socket.destroy();
    await waitFor('the server to see 10 connections go', serverConnections, (n) => n <= 40);
    const health = await httpRequest(port, 'GET', '/healthz');
    expect(health.status).toBe(200);
    const created = await httpRequest(port, 'POST', '/v1/orders', { authorization: `Bearer ${h.sandbox.test_secret_key}`, 'content-type': 'application/json' }, JSON.stringify(orderBody()));
    expect(created.status).toBe(201);
  });
});

// ---------------------------------------------------------------------------------------------

describe('MAX_CONNECTIONS at start', () => {
  it('is checked against the descriptor limit: the service warns at start when it leaves too few under ulimit -n', async () => {
    const db = await createTestDatabase({ migrate: false });
    const stream = uniqueStream();
    const child = spawn('sh', ['-c', `ulimit -n 1024 && exec "${process.execPath}" bin/checkout.ts serve`], {
      cwd: process.cwd(),
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        DATABASE_POOL_MAX: '2',
        // The run's NATS when it has one, else none (events through Postgres): the check is the same either way.
        NATS_URL: harnessNatsUrl() ?? '',
        NATS_STREAM: stream.stream,
        NATS_SUBJECT_PREFIX: stream.subjectPrefix,
        PORT: '0',
        HOST: '127.0.0.1',
        RUN_DISPATCHER: 'false',
        MAX_CONNECTIONS: '1000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    try {
      await waitFor('the start-up log', () => output, (text) => /listening on/.test(text) || child.exitCode !== null, 30_000);
      expect(output).toMatch(/MAX_CONNECTIONS \(1000\) leaves fewer than 512 of the 1024 file descriptors/);
    } finally {
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await db.drop();
      await deleteStream(stream.stream);
    }
  });
});

describe('shutdown', () => {
  it('ends server streams and cuts stalled h2c sessions, so close() finishes while `checkout listen` clients are attached', { timeout: 120_000 }, async () => {
    const h = await startHarness({ env: { ...LIMITS_ENV, HTTP_REQUEST_TIMEOUT_MS: '600000', HTTP_HEADERS_TIMEOUT_MS: '600000' } });
    const headers = { authorization: `Bearer ${h.sandbox.test_secret_key}` };
    const sessions = new Http2SessionManager(h.base);
    try {
      const clients = [
        createClient(EventService, createConnectTransport({ baseUrl: h.base, httpVersion: '1.1' })),
        createClient(EventService, createGrpcTransport({ baseUrl: h.base, sessionManager: sessions })),
      ];
      const iterators = clients.map((client) => client.listenEvents({}, { headers })[Symbol.asyncIterator]());
      for (const iterator of iterators) expect((await iterator.next()).value?.signingSecret).toBe(h.sandbox.webhook_secret);
      // A peer that will never take its answer: only the shutdown's deadline can end it.
      const stalled = http2.connect(h.base, { settings: { initialWindowSize: 0 } });
      opened.add(stalled);
      stalled.on('error', () => undefined);
      const stream = stalled.request({ ':method': 'POST', ':path': '/checkout.v1.CheckoutService/GetCheckout', 'content-type': 'application/json' });
      stream.on('error', () => undefined);
      stream.end('{"checkoutId":"nope"}');
      await sleep(200);
      const ends = iterators.map((iterator) => iterator.next().then((r) => r.done, () => true));
      // Before the fix close() waited for the listeners for ever; it must now finish (within the 10 s grace, so a minute is plenty).
      const closed = await Promise.race([h.close().then(() => 'closed'), sleep(60_000).then(() => 'still open')]);
      expect(closed).toBe('closed');
      expect(await Promise.all(ends)).toEqual([true, true]);
    } finally {
      sessions.abort();
    }
  });
});
