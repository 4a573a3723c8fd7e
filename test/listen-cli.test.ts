// `checkout listen` (sdk/cli/listen.ts) run as a real process through bin/checkout.ts, against a
// stub EventService (the remote side; the client is what is under test here) and a local
// receiver that verifies every forwarded request with the SDK's verifyWebhook.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http, { type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventService, type ListenEventsResponseSchema } from '../src/gen/checkout/v1/webhook_pb.ts';
import { verifyWebhook, type WebhookEvent } from '../sdk/index.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const CLI = fileURLToPath(new URL('../bin/checkout.ts', import.meta.url));
const TEST_KEY = `sk_test_${'L'.repeat(32)}`;
const SIGNING_SECRET = 'whsec_listenStubSecret000000000000000';

type ListenMessage = MessageInitShape<typeof ListenEventsResponseSchema>;

/** A webhook body as the service would send it: compact JSON, non-ASCII reference to prove bytes pass unchanged. */
function eventBody(id: string, type: string, sequence: number): string {
  return JSON.stringify({
    id,
    type,
    created: new Date().toISOString(),
    livemode: false,
    sequence,
    data: { id: 'ord_listen1', reference: 'Bestellung-Ä€-7', amount: 1999, currency: 'EUR' },
  });
}

/** What one connection to the stub does after its handler is called; the default holds the stream open. */
type StreamScript = (ctx: HandlerContext) => AsyncIterable<ListenMessage>;

let script: StreamScript[] = [];
const connections: { authorization: string | null }[] = [];
/** Streams the stub holds open right now (one ends when its client goes). */
let openStreams = 0;

async function* holdOpen(ctx: HandlerContext, messages: ListenMessage[]): AsyncIterable<ListenMessage> {
  yield* messages;
  await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
}

let stub: Server;
let stubUrl: string;

interface Received {
  readonly raw: string;
  readonly contentType: string | undefined;
  readonly event?: WebhookEvent;
  readonly error?: string;
}
const received: Received[] = [];
/** Status the receiver answers per event id; 200 when not listed. */
let statusFor: Record<string, number> = {};
let receiver: Server;
let receiverUrl: string;

const children = new Set<ChildProcess>();
/** Listener processes that are not children of this one (started by npx), killed after each test should they live on. */
const strays = new Set<number>();

beforeAll(async () => {
  const routes = (router: ConnectRouter) =>
    router.service(EventService, {
      listenEvents(_request, ctx) {
        connections.push({ authorization: ctx.requestHeader.get('authorization') });
        openStreams += 1;
        ctx.signal.addEventListener('abort', () => (openStreams -= 1), { once: true });
        const next = script.shift() ?? ((c: HandlerContext) => holdOpen(c, [{ signingSecret: SIGNING_SECRET }]));
        return next(ctx);
      },
    });
  stub = http.createServer(connectNodeAdapter({ routes }));
  receiver = http.createServer((req, res) => {
    void readBody(req).then((raw) => {
      let entry: Received;
      try {
        const event = verifyWebhook(raw, req.headers['checkout-signature'] as string | undefined, SIGNING_SECRET);
        entry = { raw: raw.toString('utf8'), contentType: req.headers['content-type'], event };
      } catch (err) {
        entry = { raw: raw.toString('utf8'), contentType: req.headers['content-type'], error: (err as Error).message };
      }
      received.push(entry);
      res.writeHead(entry.event ? (statusFor[entry.event.id] ?? 200) : 400).end();
    });
  });
  stubUrl = await listenLocal(stub);
  receiverUrl = `${await listenLocal(receiver)}/webhooks`;
});

afterEach(async () => {
  // No listener may outlive its test; each is SIGKILLed if it did not stop.
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  for (const pid of strays) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  strays.clear();
  script = [];
  connections.length = 0;
  received.length = 0;
  statusFor = {};
});

afterAll(async () => {
  for (const server of [stub, receiver]) {
    if (!server) continue;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts `checkout listen` with the given arguments, without inheriting CHECKOUT_* settings. */
function startListen(args: string[], env: Record<string, string> = {}) {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  delete inherited.CHECKOUT_API_KEY;
  delete inherited.CHECKOUT_API_BASE;
  const child = spawn(process.execPath, [CLI, 'listen', ...args], { cwd: REPO, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** Polls until check() is truthy, failing with the CLI's output after ms. */
async function waitFor(check: () => boolean, ms: number, what: string, output: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms. CLI output:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Resolves with the exit, or SIGKILLs the child and rejects after ms. */
async function exitWithin(run: ReturnType<typeof startListen>, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      run.exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          run.child.kill('SIGKILL');
          reject(new Error(`the listener did not exit within ${ms} ms. Output:\n${run.stdout()}${run.stderr()}`));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const eventLines = (stdout: string) => stdout.split('\n').filter((line) => / evt_\S+ {2}<-- /.test(line));

describe('checkout listen', () => {
  it('forwards each streamed event byte for byte, signed with the streamed secret, and prints one line per event', async () => {
    const first = eventBody('evt_listen_1', 'order.created', 1);
    const second = eventBody('evt_listen_2', 'order.paid', 2);
    statusFor = { evt_listen_2: 202 };
    script = [(ctx) => holdOpen(ctx, [{ signingSecret: SIGNING_SECRET }, { body: first, eventId: 'evt_listen_1', type: 'order.created' }, { body: second, eventId: 'evt_listen_2', type: 'order.paid' }])];

    const run = startListen(['--forward-to', receiverUrl, '--api-base', stubUrl], { CHECKOUT_API_KEY: TEST_KEY });
    const output = () => run.stdout() + run.stderr();
    await waitFor(() => eventLines(run.stdout()).length === 2, 15_000, 'two forwarded events', output);

    expect(connections).toEqual([{ authorization: `Bearer ${TEST_KEY}` }]);
    expect(received.map((r) => r.error)).toEqual([undefined, undefined]);
    expect(received.map((r) => r.event?.id)).toEqual(['evt_listen_1', 'evt_listen_2']);
    expect(received.map((r) => r.raw)).toEqual([first, second]);
    expect(received.map((r) => r.contentType)).toEqual(['application/json', 'application/json']);

    expect(run.stdout()).toContain(`Ready! Forwarding events to ${receiverUrl}. Your webhook signing secret is ${SIGNING_SECRET}`);
    const [line1, line2] = eventLines(run.stdout());
    expect(line1).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}order\.created {2}evt_listen_1 {2}<-- 200 OK \(\d+ ms\)$/);
    expect(line2).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}order\.paid {2}evt_listen_2 {2}<-- 202 Accepted \(\d+ ms\)$/);

    run.child.kill('SIGINT');
    expect(await exitWithin(run, 10_000)).toEqual({ code: 0, signal: null });
  });

  it('reconnects with backoff when the stream drops, and keeps forwarding', async () => {
    script = [
      // A stream that fails after its first event.
      async function* () {
        yield { signingSecret: SIGNING_SECRET };
        yield { body: eventBody('evt_before_drop', 'order.created', 1), eventId: 'evt_before_drop', type: 'order.created' };
        throw new ConnectError('going away for a deploy', Code.Unavailable);
      },
      (ctx) => holdOpen(ctx, [{ signingSecret: SIGNING_SECRET }, { body: eventBody('evt_after_drop', 'order.paid', 2), eventId: 'evt_after_drop', type: 'order.paid' }]),
    ];
    const run = startListen(['--forward-to', receiverUrl, '--api-base', stubUrl, '--api-key', TEST_KEY]);
    const output = () => run.stdout() + run.stderr();
    // The CLI prints an event's line once the local answer is back, a moment after the receiver saw it.
    await waitFor(() => received.length === 2 && eventLines(run.stdout()).length === 2, 20_000, 'both events, across a reconnect', output);

    expect(received.map((r) => [r.event?.id, r.error])).toEqual([
      ['evt_before_drop', undefined],
      ['evt_after_drop', undefined],
    ]);
    expect(connections).toHaveLength(2);
    expect(run.stderr()).toMatch(/stream dropped: going away for a deploy; reconnecting in \d+\.\d s/);
    expect(run.stdout()).toContain('Reconnected to');
    expect(eventLines(run.stdout())).toHaveLength(2);

    run.child.kill('SIGINT');
    expect((await exitWithin(run, 10_000)).code).toBe(0);
  });

  it('prints the network error when nothing listens at the forward URL', async () => {
    const closed = http.createServer();
    const deadUrl = `${await listenLocal(closed)}/webhooks`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    script = [(ctx) => holdOpen(ctx, [{ signingSecret: SIGNING_SECRET }, { body: eventBody('evt_nobody', 'order.failed', 1), eventId: 'evt_nobody', type: 'order.failed' }])];

    const run = startListen(['--forward-to', deadUrl, '--api-base', stubUrl, '--api-key', TEST_KEY]);
    await waitFor(() => eventLines(run.stdout()).length === 1, 15_000, 'the failed forward line', () => run.stdout() + run.stderr());
    expect(eventLines(run.stdout())[0]).toMatch(/order\.failed {2}evt_nobody {2}<-- error: connection refused; is your server listening on 127\.0\.0\.1:\d+\? \(\d+ ms\)$/);

    run.child.kill('SIGTERM');
    expect((await exitWithin(run, 10_000)).code).toBe(0);
  });

  it('warns when events would leave this machine, and not for a loopback address', { timeout: 150_000 }, async () => {
    for (const [target, warned] of [
      ['http://192.0.2.1:9/hooks', true],
      ['https://hooks.example.invalid/x', true],
      [receiverUrl, false],
      [receiverUrl.replace('127.0.0.1', 'localhost'), false],
      ['http://[::1]:9/hooks', false],
    ] as const) {
      // Only the secret is streamed: nothing is forwarded, so no request leaves for the addresses above.
      script = [(ctx) => holdOpen(ctx, [{ signingSecret: SIGNING_SECRET }])];
      const run = startListen(['--forward-to', target, '--api-base', stubUrl, '--api-key', TEST_KEY]);
      await waitFor(() => run.stdout().includes('Ready!'), 15_000, 'the listener to be ready', () => run.stdout() + run.stderr());
      if (warned) expect(run.stderr()).toMatch(/warning: --forward-to \S+ is not this machine: your test events .* will be sent there/);
      else expect(run.stderr()).not.toContain('warning');
      run.child.kill('SIGINT');
      expect((await exitWithin(run, 10_000)).code).toBe(0);
    }
    expect(received).toHaveLength(0);
  });

  it('refuses a live key before connecting', async () => {
    const run = startListen(['--forward-to', receiverUrl, '--api-base', stubUrl, '--api-key', `sk_live_${'L'.repeat(32)}`]);
    expect((await exitWithin(run, 15_000)).code).toBe(2);
    expect(run.stderr()).toContain('refuses live keys');
    expect(run.stderr()).toContain('sk_test_');
    expect(connections).toHaveLength(0);
  });

  it('explains missing settings', async () => {
    const noKey = startListen(['--forward-to', receiverUrl, '--api-base', stubUrl]);
    expect((await exitWithin(noKey, 15_000)).code).toBe(2);
    expect(noKey.stderr()).toContain('CHECKOUT_API_KEY');

    const noTarget = startListen(['--api-base', stubUrl, '--api-key', TEST_KEY]);
    expect((await exitWithin(noTarget, 15_000)).code).toBe(2);
    expect(noTarget.stderr()).toContain('--forward-to');
    expect(connections).toHaveLength(0);
  });

  it('stops with exit code 1 when the service refuses the key', async () => {
    script = [
      // eslint-disable-next-line require-yield -- refuses before streaming anything
      async function* () {
        throw new ConnectError('API key revoked', Code.Unauthenticated);
      },
    ];
    const run = startListen(['--forward-to', receiverUrl, '--api-base', stubUrl, '--api-key', TEST_KEY]);
    expect((await exitWithin(run, 15_000)).code).toBe(1);
    expect(run.stderr()).toContain('the service refused the API key: API key revoked');
  });

  it('`npx checkout listen` stopped with SIGTERM to npx ends: the listener process exits and its stream closes', async () => {
    // npx runs the command under `sh -c`; a SIGTERM to npx kills that shell, which does not pass it on.
    const inherited: NodeJS.ProcessEnv = { ...process.env };
    delete inherited.CHECKOUT_API_KEY;
    delete inherited.CHECKOUT_API_BASE;
    const npx = spawn('npx', ['checkout', 'listen', '--forward-to', receiverUrl, '--api-base', stubUrl, '--api-key', TEST_KEY], {
      cwd: REPO,
      env: { ...inherited, npm_config_offline: 'true', npm_config_yes: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(npx);
    let out = '';
    npx.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    npx.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    await waitFor(() => out.includes('Ready! Forwarding events to'), 60_000, 'the listener ready', () => out);
    // The Node process itself, not npx's shell (`sh -c checkout listen …`).
    const listener = descendants(npx.pid!).find((pid) => /\bnode\S*\s.*checkout\S*\slisten\b/.test(commandLine(pid)));
    expect(listener, `no listener process under npx (${npx.pid})`).toBeDefined();
    strays.add(listener!);
    expect(openStreams).toBe(1);

    npx.kill('SIGTERM');
    await waitFor(() => !alive(listener!), 15_000, 'the listener process to exit', () => out);
    await waitFor(() => openStreams === 0, 15_000, 'its stream to close', () => out);
  }, 120_000);
});

/** Every process below pid (children, grandchildren…), read from /proc (Linux). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid !== parent) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
