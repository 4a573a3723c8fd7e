// The operator's command line (bin/checkout.ts), run as a real process with the Node that runs
// vitest (24, which strips the TypeScript types): sandbox create, serve on an empty database,
// and the messages an operator sees when Postgres is down or a setting is wrong.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/kernel/adapters/postgres/database.ts';
import type { SandboxCredentials, TestSandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import type { IssuedApiKeys } from '../src/modules/merchant/application/issue-api-keys.ts';
import { TEST_POSTGRES_URL } from './support/database.ts';
import { deleteStream, freePort } from './support/nats-server.ts';
import { orderBody } from './support/order-fixtures.ts';
import { harnessNatsUrl } from './support/requirements.ts';
import { waitFor } from './support/wait.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const CLI = fileURLToPath(new URL('../bin/checkout.ts', import.meta.url));
const UNREACHABLE_POSTGRES = 'postgres://postgres@127.0.0.1:1/x';

const id = randomBytes(5).toString('hex');
/** Databases this file makes the CLI create; none exists before the CLI runs. */
const sandboxDbName = `checkout_test_cli_${id}_sandbox`;
const serveDbName = `checkout_test_cli_${id}_serve`;
const npmStartDbName = `checkout_test_cli_${id}_npm`;
const natsStream = `TEST_CLI_${id}`;
const npmStartStream = `TEST_CLI_NPM_${id}`;

const children = new Set<ChildProcess>();

/** The environment of a CLI run: fresh database, unique stream and subjects, no inherited service settings. */
function cliEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['DATABASE_URL', 'NATS_URL', 'PORT', 'HOST', 'PUBLIC_URL', 'CHECKOUT_URL', 'NATS_STREAM', 'NATS_SUBJECT_PREFIX', 'LOG_LEVEL']) delete env[key];
  return {
    ...env,
    DATABASE_URL: `${TEST_POSTGRES_URL}/${sandboxDbName}`,
    // The run's NATS when it has one, else none: the service then sends its events through Postgres.
    NATS_URL: harnessNatsUrl() ?? '',
    NATS_STREAM: natsStream,
    NATS_SUBJECT_PREFIX: `test.cli.${id}.events`,
    PORT: '0',
    HOST: '127.0.0.1',
    ...overrides,
  };
}

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawns a command, collecting its output. */
function spawnTracked(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** Rejects after ms, SIGKILLing the child first. */
async function bounded<T>(child: ChildProcess, promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`${what} did not finish within ${ms} ms`));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the CLI to completion (at most timeoutMs). */
async function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Exit> {
  const run = spawnTracked(process.execPath, [CLI, ...args], env);
  return bounded(run.child, run.exited, timeoutMs, `checkout ${args.join(' ')}`);
}

/** A running `checkout serve`. */
interface Serving {
  readonly child: ChildProcess;
  readonly port: number;
  /** The service's own process (its log lines carry the pid): the child itself, or a descendant of it. */
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then the exit (SIGKILL and a failure after timeoutMs). */
  stop(timeoutMs?: number): Promise<Exit>;
}

/** Starts `checkout serve` and waits (bounded) for its "listening on host:port" log line. */
function startServe(env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Serving> {
  return startServing(process.execPath, [CLI, 'serve'], env, timeoutMs);
}

/** Starts a command that runs the service and waits (bounded) for the service's "listening on host:port" log line. */
async function startServing(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Serving> {
  const run = spawnTracked(command, args, env);
  const { port, pid } = await bounded(
    run.child,
    new Promise<{ port: number; pid: number }>((resolve, reject) => {
      const check = () => {
        // A JSON log line: {"level":30,…,"pid":1234,…,"msg":"Checkout service listening on 127.0.0.1:3000 …"}
        const match = /"pid":(\d+)[^\n]*listening on [^\s"]+:(\d+)/.exec(run.stdout());
        if (match) {
          clearInterval(poll);
          resolve({ pid: Number(match[1]), port: Number(match[2]) });
        }
      };
      const poll = setInterval(check, 20);
      void run.exited.then((exit) => {
        clearInterval(poll);
        reject(new Error(`serve exited (${exit.code ?? exit.signal}) before listening:\n${exit.stdout}\n${exit.stderr}`));
      });
    }),
    timeoutMs,
    `${[command, ...args].join(' ')} start`,
  );
  return {
    child: run.child,
    port,
    pid,
    stdout: run.stdout,
    stderr: run.stderr,
    stop: async (stopTimeoutMs = 30_000) => {
      run.child.kill('SIGTERM');
      return bounded(run.child, run.exited, stopTimeoutMs, 'serve shutdown after SIGTERM');
    },
  };
}


/** The first-start credentials `serve` prints: the JSON block after the "First start" line. */
function firstSandboxOf(stdout: string): TestSandboxCredentials | undefined {
  const at = stdout.indexOf('First start: created a sandbox merchant');
  if (at < 0) return undefined;
  const open = stdout.indexOf('\n{', at);
  const close = stdout.indexOf('\n}', open);
  if (open < 0 || close < 0) return undefined;
  return JSON.parse(stdout.slice(open + 1, close + 2)) as TestSandboxCredentials;
}

function expectTestCredentials(credentials: TestSandboxCredentials): void {
  expect(credentials.merchant_id).toMatch(/^mer_[A-Za-z0-9]+$/);
  expect(credentials.test_secret_key).toMatch(/^sk_test_[A-Za-z0-9]+$/);
  expect(credentials.test_publishable_key).toMatch(/^pk_test_[A-Za-z0-9]+$/);
  expect(credentials.webhook_secret).toMatch(/^whsec_[A-Za-z0-9]+$/);
}

function expectCredentials(credentials: SandboxCredentials): void {
  expectTestCredentials(credentials);
  expect(credentials.live_secret_key).toMatch(/^sk_live_[A-Za-z0-9]+$/);
  expect(credentials.live_publishable_key).toMatch(/^pk_live_[A-Za-z0-9]+$/);
  expect(credentials.live_webhook_secret).toMatch(/^whsec_[A-Za-z0-9]+$/);
}

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

/** Runs fn with a one-connection pool on a database of this file. */
async function withDatabase<T>(name: string, fn: (knex: ReturnType<typeof createDatabase>) => Promise<T>): Promise<T> {
  const knex = createDatabase({ url: `${TEST_POSTGRES_URL}/${name}`, poolMax: 1 });
  try {
    return await fn(knex);
  } finally {
    await knex.destroy();
  }
}

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(
    [...children].map((child) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('close', () => resolve())))),
  );
  const admin = createDatabase({ url: `${TEST_POSTGRES_URL}/postgres`, poolMax: 1 });
  try {
    for (const name of [sandboxDbName, serveDbName, npmStartDbName]) await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
  } finally {
    await admin.destroy();
  }
  // Made on the run's NATS, if it has one (deleteStream gives up at once where there is none).
  for (const stream of [natsStream, npmStartStream]) await deleteStream(stream);
});

describe('checkout sandbox create', () => {
  const env = cliEnv({ PUBLIC_URL: 'https://api.cli.test', CHECKOUT_URL: 'https://pay.cli.test' });
  let acme: SandboxCredentials;

  it('creates the missing database, migrates it, and prints the credentials as JSON', async () => {
    const exit = await runCli(['sandbox', 'create', '--name', 'Acme'], env);
    expect(exit.stderr).not.toMatch(/^\s+at /m);
    expect(exit.code).toBe(0);
    acme = JSON.parse(exit.stdout) as SandboxCredentials;
    expectCredentials(acme);
    expect(acme.name).toBe('Acme');
    expect(acme.settlement_currency).toBe('EUR');
    expect(acme.api_base_url).toBe('https://api.cli.test');
    expect(acme.checkout_host).toBe('https://pay.cli.test');
  });

  it('stores the API keys only as SHA-256 hashes', async () => {
    const knex = createDatabase({ url: `${TEST_POSTGRES_URL}/${sandboxDbName}`, poolMax: 1 });
    try {
      const rows = await knex('api_keys').where({ merchant_id: acme.merchant_id }).select('kind', 'livemode', 'key_hash');
      const expected = [
        { kind: 'secret', livemode: false, key_hash: sha256(acme.test_secret_key) },
        { kind: 'publishable', livemode: false, key_hash: sha256(acme.test_publishable_key) },
        { kind: 'secret', livemode: true, key_hash: sha256(acme.live_secret_key) },
        { kind: 'publishable', livemode: true, key_hash: sha256(acme.live_publishable_key) },
      ];
      expect(rows).toHaveLength(4);
      expect(rows).toEqual(expect.arrayContaining(expected));
      for (const row of rows) expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);

      // No column of any row of any table holds a key in clear, nor a webhook signing secret (sealed under the vault's keys).
      const keys = [acme.test_secret_key, acme.test_publishable_key, acme.live_secret_key, acme.live_publishable_key, acme.webhook_secret, acme.live_webhook_secret];
      const tables = (await knex('information_schema.tables').where({ table_schema: 'public', table_type: 'BASE TABLE' }).pluck('table_name')) as string[];
      expect(tables).toContain('api_keys');
      for (const table of tables) {
        const dump = ((await knex.raw('SELECT t::text AS row FROM ?? t', [table])) as { rows: { row: string }[] }).rows.map((r) => r.row).join('\n');
        for (const key of keys) expect(dump.includes(key), `${table} contains a key in clear`).toBe(false);
        expect(dump.includes('whsec_'), `${table} contains a webhook signing secret in clear`).toBe(false);
      }
    } finally {
      await knex.destroy();
    }
  });

  it('creates another merchant on a second run', async () => {
    const exit = await runCli(['sandbox', 'create', '--name', 'Beta', '--settlement-currency', 'USD'], env);
    expect(exit.code).toBe(0);
    const beta = JSON.parse(exit.stdout) as SandboxCredentials;
    expectCredentials(beta);
    expect(beta.merchant_id).not.toBe(acme.merchant_id);
    expect(beta.settlement_currency).toBe('USD');
  });

  it('needs --name, and rejects unknown options with the usage', async () => {
    const noName = await runCli(['sandbox', 'create'], env);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/--name/);
    const unknown = await runCli(['sandbox', 'create', '--nmae', 'x'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--nmae'/);
    expect(unknown.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('checkout serve', () => {
  let port: number;
  let first: TestSandboxCredentials;

  it('on an empty database: creates it, prints the first sandbox\'s test credentials once (no live key in the log), and its test key works', async () => {
    port = await freePort();
    const serving = await startServe(cliEnv({ DATABASE_URL: `${TEST_POSTGRES_URL}/${serveDbName}`, PORT: String(port) }));
    try {
      expect(serving.port).toBe(port);
      // The credentials are printed right after the listening line: wait for the write.
      first = (await waitFor('the first-start credentials on stdout', () => firstSandboxOf(serving.stdout()), (x) => x !== undefined, 30_000))!;
      expectTestCredentials(first);
      expect(first.api_base_url).toBe(`http://localhost:${port}`);
      expect(serving.stdout().match(/First start/g)).toHaveLength(1);
      expect(serving.stdout()).toContain(`checkout keys create --merchant ${first.merchant_id} --mode live`);
      // Test mode only: no live key or live webhook secret is printed, and none was created to be lost.
      expect(Object.keys(first).filter((k) => k.startsWith('live_'))).toEqual([]);
      expect(serving.stdout()).not.toMatch(/sk_live_|pk_live_/);
      expect(serving.stdout().match(/whsec_/g)).toHaveLength(1);
      await withDatabase(serveDbName, async (knex) => {
        expect(await knex('api_keys').where({ merchant_id: first.merchant_id }).orderBy('kind', 'desc').select('kind', 'livemode', 'key_hash')).toEqual([
          { kind: 'secret', livemode: false, key_hash: sha256(first.test_secret_key) },
          { kind: 'publishable', livemode: false, key_hash: sha256(first.test_publishable_key) },
        ]);
        expect(await knex('webhook_endpoints').where({ merchant_id: first.merchant_id }).pluck('livemode')).toEqual([false]);
      });

      const res = await fetch(`http://127.0.0.1:${port}/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${first.test_secret_key}`, 'content-type': 'application/json' },
        body: JSON.stringify(orderBody({ reference: 'CLI-1' })),
      });
      expect(res.status).toBe(201);
      const order = (await res.json()) as { id: string; checkout_url: string; livemode: boolean };
      expect(order.id).toMatch(/^ord_/);
      expect(order.livemode).toBe(false);
      expect(order.checkout_url).toBe(`http://localhost:${port}/c/${order.id.slice('ord_'.length)}`);

      const unauthorized = await fetch(`http://127.0.0.1:${port}/v1/orders/${order.id}`, { headers: { authorization: 'Bearer sk_test_nope' } });
      expect(unauthorized.status).toBe(401);
      await unauthorized.body?.cancel();
    } finally {
      // This process's fetch still holds a keep-alive connection: SIGTERM must stop the service anyway.
      const exit = await serving.stop();
      expect(exit.code).toBe(0);
    }
  });

  let live: IssuedApiKeys;
  let moreTest: IssuedApiKeys;

  it('keys create issues a live key pair for the first sandbox, and another test pair, each printed once and stored as hashes', async () => {
    const env = cliEnv({ DATABASE_URL: `${TEST_POSTGRES_URL}/${serveDbName}` });
    const liveExit = await runCli(['keys', 'create', '--merchant', first.merchant_id, '--mode', 'live'], env);
    expect(liveExit.code, liveExit.stderr).toBe(0);
    live = JSON.parse(liveExit.stdout) as IssuedApiKeys;
    expect(live).toEqual({ merchant_id: first.merchant_id, livemode: true, secret_key: expect.stringMatching(/^sk_live_[A-Za-z0-9]+$/), publishable_key: expect.stringMatching(/^pk_live_[A-Za-z0-9]+$/) });

    const testExit = await runCli(['keys', 'create', '--merchant', first.merchant_id, '--mode', 'test'], env);
    expect(testExit.code, testExit.stderr).toBe(0);
    moreTest = JSON.parse(testExit.stdout) as IssuedApiKeys;
    expect(moreTest).toMatchObject({ merchant_id: first.merchant_id, livemode: false, secret_key: expect.stringMatching(/^sk_test_/), publishable_key: expect.stringMatching(/^pk_test_/) });
    expect(moreTest.secret_key).not.toBe(first.test_secret_key);

    await withDatabase(serveDbName, async (knex) => {
      const rows = await knex('api_keys').where({ merchant_id: first.merchant_id }).select('kind', 'livemode', 'key_hash');
      expect(rows).toHaveLength(6);
      expect(rows).toEqual(
        expect.arrayContaining([
          { kind: 'secret', livemode: true, key_hash: sha256(live.secret_key) },
          { kind: 'publishable', livemode: true, key_hash: sha256(live.publishable_key) },
          { kind: 'secret', livemode: false, key_hash: sha256(moreTest.secret_key) },
          { kind: 'publishable', livemode: false, key_hash: sha256(moreTest.publishable_key) },
        ]),
      );
    });
  });

  it('keys create: an unknown merchant is exit 1 and stores nothing; a missing --merchant or a bad --mode is exit 2 with the usage', async () => {
    const env = cliEnv({ DATABASE_URL: `${TEST_POSTGRES_URL}/${serveDbName}` });
    const count = () => withDatabase(serveDbName, async (knex) => Number((await knex('api_keys').count<{ n: string }[]>('* as n'))[0]!.n));
    const before = await count();
    const unknown = await runCli(['keys', 'create', '--merchant', 'mer_doesnotexist', '--mode', 'live'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^checkout: no merchant mer_doesnotexist in the database/m);
    expect(unknown.stdout).toBe('');
    expect(await count()).toBe(before);

    for (const [args, message] of [
      [['--mode', 'live'], /--merchant mer_/],
      [['--merchant', 'acme', '--mode', 'live'], /--merchant mer_/],
      [['--merchant', first.merchant_id], /--mode test or --mode live/],
      [['--merchant', first.merchant_id, '--mode', 'production'], /--mode test or --mode live/],
    ] as const) {
      const exit = await runCli(['keys', 'create', ...args], env);
      expect({ args, code: exit.code }).toEqual({ args, code: 2 });
      expect(exit.stderr).toMatch(message);
      expect(exit.stdout).toBe('');
    }
    expect(await count()).toBe(before);
  });

  it('a second start on the same database prints no credentials; the first key and the issued keys work, each in its mode', async () => {
    const serving = await startServe(cliEnv({ DATABASE_URL: `${TEST_POSTGRES_URL}/${serveDbName}`, PORT: String(port) }));
    try {
      const list = async (key: string) => {
        const res = await fetch(`http://127.0.0.1:${serving.port}/v1/orders?limit=5`, { headers: { authorization: `Bearer ${key}` } });
        return { status: res.status, references: res.ok ? ((await res.json()) as { data: { reference: string }[] }).data.map((o) => o.reference) : [] };
      };
      expect(await list(first.test_secret_key)).toEqual({ status: 200, references: ['CLI-1'] });
      expect(await list(moreTest.secret_key)).toEqual({ status: 200, references: ['CLI-1'] });
      // The live key sees live mode, where the test order is not.
      expect(await list(live.secret_key)).toEqual({ status: 200, references: [] });
      const liveOrder = await fetch(`http://127.0.0.1:${serving.port}/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${live.secret_key}`, 'content-type': 'application/json' },
        body: JSON.stringify(orderBody({ reference: 'CLI-LIVE-1' })),
      });
      expect(liveOrder.status).toBe(201);
      expect(((await liveOrder.json()) as { livemode: boolean }).livemode).toBe(true);
      expect(serving.stdout()).not.toMatch(/First start/);
      expect(serving.stdout()).not.toMatch(/sk_test_|sk_live_/);
    } finally {
      const exit = await serving.stop();
      expect(exit.code).toBe(0);
    }
  });
});

describe('operator errors', () => {
  it.each([
    ['serve', ['serve']],
    ['sandbox create', ['sandbox', 'create', '--name', 'Acme']],
    ['migrate', ['migrate']],
  ])('%s: unreachable Postgres gives a clear message and exit code 1', async (_name, args) => {
    const exit = await runCli(args, cliEnv({ DATABASE_URL: UNREACHABLE_POSTGRES }), 20_000);
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/^checkout: Cannot reach Postgres at postgres:\/\/postgres@127\.0\.0\.1:1\/x/im);
    expect(exit.stderr).not.toMatch(/^\s+at /m);
    expect(exit.stdout).not.toMatch(/listening/);
  });

  it('does not print the database password', async () => {
    const exit = await runCli(['serve'], cliEnv({ DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/x' }), 20_000);
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/x/);
    expect(exit.stderr + exit.stdout).not.toContain('hunter2');
  });

  it.each([
    ['PORT', 'abc', /PORT must be an integer from 0 to 65535, got "abc"/],
    ['PORT', '70000', /PORT must be an integer/],
    ['DATABASE_URL', 'mysql://localhost/x', /DATABASE_URL must use postgres: or postgresql:/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL has an invalid value "loud"/],
    ['MAX_CONNECTIONS', '0', /MAX_CONNECTIONS must be an integer from 1 to 1000000, got "0"/],
    ['HTTP_HEADERS_TIMEOUT_MS', '60000', /HTTP_HEADERS_TIMEOUT_MS \(60000\) must not be longer than HTTP_REQUEST_TIMEOUT_MS \(30000\)/],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'yes', /WEBHOOK_ALLOW_PRIVATE_NETWORKS has an invalid value "yes" \(one of true, false\)/],
    ['SERVE_WORKERS', 'relay,bogus', /SERVE_WORKERS has an invalid value "relay,bogus": Unknown worker "bogus". Workers: relay, dispatcher, sweeper, settler, biller, janitor/],
    ['TRUST_PROXY', 'yes', /TRUST_PROXY has an invalid value "yes" \(false; true for the one proxy in front/],
    ['NATS_URL', 'nats://n1:4222,,nats://n3:4222', /NATS_URL must be a server URL or a comma list of them/],
    ['NATS_STREAM_REPLICAS', '0', /NATS_STREAM_REPLICAS must be an integer from 1 to 5, got "0"/],
    ['DATABASE_NAMED_STATEMENTS', 'no', /DATABASE_NAMED_STATEMENTS has an invalid value "no" \(one of true, false\)/],
  ])('%s=%s is refused with a message naming it and exit code 1', async (key, value, message) => {
    const exit = await runCli(['serve'], cliEnv({ [key]: value }), 20_000);
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(message);
    expect(exit.stderr).not.toMatch(/^\s+at /m);
  });

  it('worker needs --only with known worker names: exit 2 and the list otherwise', async () => {
    const none = await runCli(['worker'], cliEnv());
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/worker needs --only with one or more of: relay, dispatcher, sweeper, settler, biller, janitor/);
    const unknown = await runCli(['worker', '--only', 'relay,mailer'], cliEnv());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown worker "mailer"/);
  });

  it('--help prints the usage even with a broken environment; an unknown command exits 2', async () => {
    const help = await runCli(['--help'], cliEnv({ PORT: 'abc' }));
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/checkout sandbox create --name NAME/);
    const unknown = await runCli(['frobnicate'], cliEnv());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown command: frobnicate/);
  });
});

/** Whether a process with this pid still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Whether a TCP port on 127.0.0.1 can be bound (nothing listens on it any more). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('npm wiring', () => {
  it('npm start execs `node --max-semi-space-size=8 bin/checkout.ts serve`, as the Dockerfile does, and the package exposes the checkout bin', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
    // exec: the script's shell becomes the service, so the SIGTERM npm forwards to its child reaches it.
    expect(pkg.scripts.start).toBe('exec node --max-semi-space-size=8 bin/checkout.ts serve');
    // The image starts the service with the same flags (docs/deploy.md: memory).
    expect(readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8')).toContain('CMD ["node", "--max-semi-space-size=8", "bin/checkout.ts", "serve"]');
    expect(pkg.bin.checkout).toBe('bin/checkout.ts');
    expect(readFileSync(CLI, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('`npm start` stops cleanly on a SIGTERM sent to the npm process: the service exits with 0 and frees its port', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const env = cliEnv({
      DATABASE_URL: `${TEST_POSTGRES_URL}/${npmStartDbName}`,
      PORT: String(port),
      NATS_STREAM: npmStartStream,
      NATS_SUBJECT_PREFIX: `test.cli.npm.${id}.events`,
      LOG_LEVEL: 'info',
    });
    const serving = await startServing('npm', ['start'], env, 60_000);
    try {
      expect(serving.port).toBe(port);
      expect(serving.pid).not.toBe(serving.child.pid);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

      // What a process manager does: SIGTERM to the process it started, which is npm.
      const exit = await serving.stop(30_000);
      expect(exit.code, exit.stderr).toBe(0);
      await waitFor('the service process to exit', () => alive(serving.pid), (running) => !running, 30_000);
      expect(await bindable(port)).toBe(true);
    } finally {
      // Should the signal not have reached it, the service must not outlive the test.
      if (alive(serving.pid)) process.kill(serving.pid, 'SIGKILL');
    }
  });

  it('`npx checkout` in the repository runs the root package\'s own bin (sandbox create works)', async () => {
    const env = cliEnv({ npm_config_offline: 'true', npm_config_yes: 'true' });
    const help = spawnTracked('npx', ['checkout', '--help'], env);
    const helpExit = await bounded(help.child, help.exited, 60_000, 'npx checkout --help');
    expect(helpExit.code).toBe(0);
    expect(helpExit.stdout).toMatch(/checkout sandbox create --name NAME/);

    const create = spawnTracked('npx', ['checkout', 'sandbox', 'create', '--name', 'Npx shop'], env);
    const createExit = await bounded(create.child, create.exited, 60_000, 'npx checkout sandbox create');
    expect(createExit.code, createExit.stderr).toBe(0);
    const credentials = JSON.parse(createExit.stdout) as SandboxCredentials;
    expectCredentials(credentials);
    expect(credentials.name).toBe('Npx shop');
  });
});
