// Helpers shared by the benchmarks that run a real server process (bench/orders.ts, bench/webhooks.ts):
// environment, the bench database and NATS stream, the server's start and stop, CPU readings, percentiles.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as connectNats } from 'nats';
import type { Knex } from 'knex';
import { createDatabase } from '../src/kernel/adapters/postgres/database.ts';
import { PostgresLedgerAudit } from '../src/modules/ledger/adapters/postgres/postgres-ledger.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

export const POSTGRES_URL = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
/**
 * Where the server under test reaches Postgres (default: BENCH_POSTGRES_URL), e.g. a PgBouncer in front
 * of it with a wildcard database entry: postgres://postgres@127.0.0.1:6432. The bench itself (database
 * creation, pgbench, counts) always talks to BENCH_POSTGRES_URL.
 */
export const SERVER_POSTGRES_URL = (process.env.BENCH_SERVER_POSTGRES_URL ?? POSTGRES_URL).replace(/\/+$/, '');
/** The server's DATABASE_URL for a bench database. */
export const serverDatabaseUrl = (dbName: string) => `${SERVER_POSTGRES_URL}/${dbName}`;
export const NATS_URL = process.env.NATS_URL?.trim() || 'nats://127.0.0.1:4222';
/**
 * BENCH_EVENTS: how the server under test carries its events: `nats` (NATS JetStream at NATS_URL, the
 * default) or `postgres-outbox` (no NATS_URL: the event stream in Postgres). bench/webhooks.ts reads it.
 */
export const EVENTS = eventsOf(process.env.BENCH_EVENTS?.trim() || 'nats');

function eventsOf(value: string): 'nats' | 'postgres-outbox' {
  if (value !== 'nats' && value !== 'postgres-outbox') throw new Error(`BENCH_EVENTS must be nats or postgres-outbox, got "${value}"`);
  return value;
}
export const KEEP_DB = process.env.BENCH_KEEP_DB === '1';
/** Extra environment of the server under test: BENCH_SERVER_ENV="SERVE_WORKERS=none LOG_LEVEL=info". */
export const SERVER_ENV: Record<string, string> = Object.fromEntries(
  (process.env.BENCH_SERVER_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
/** Node flags of the server under test: by default those `npm start` and the Dockerfile use. */
export const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '--max-semi-space-size=8').split(/\s+/).filter(Boolean);

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

// ---------------------------------------------------------------- processes

/** CPU seconds (user + system) a process has used. */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** Busy and total CPU seconds of the whole machine. */
export async function machineCpu(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: (total - idle) / 100, total: total / 100 };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---------------------------------------------------------------- server

export interface Sandbox {
  merchant_id: string;
  test_secret_key: string;
}

export interface Server {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly sandbox: Sandbox;
  readonly exited: Promise<number | null>;
}

/** Runs `checkout serve` with `env` on top of this process's environment; answers once it printed its sandbox. */
export async function startServer(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, 'bin/checkout.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      if (code !== 0) log(`server exited with ${signal ?? `code ${code}`}`);
      resolve(code);
    }),
  );
  child.stderr!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) process.stderr.write(`[server] ${line}\n`);
  });
  let out = '';
  const sandbox = await new Promise<Sandbox>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      // The JSON block after the "First start" line; log lines (JSON too) may come before or after it.
      const at = out.indexOf('First start: created a sandbox merchant');
      const open = at < 0 ? -1 : out.indexOf('\n{', at);
      const close = open < 0 ? -1 : out.indexOf('\n}', open);
      if (close < 0) return;
      try {
        resolve(JSON.parse(out.slice(open + 1, close + 2)) as Sandbox);
      } catch {
        // the JSON is not complete yet
      }
    });
    void exited.then((code) => reject(new Error(`server exited with code ${code} before printing the sandbox; stdout: ${out}`)));
    setTimeout(() => reject(new Error(`no sandbox printed within 30 s; stdout: ${out}`)), 30_000).unref();
  });
  return { child, pid: child.pid!, sandbox, exited };
}

/** Runs `checkout worker --only NAMES` with `env`; answers once it said its workers run. */
export async function startWorker(env: Record<string, string>, names: string): Promise<Server> {
  // At info: its start line ("Workers running") is what tells that it runs.
  const started = await spawnReady(['bin/checkout.ts', 'worker', '--only', names], { ...env, LOG_LEVEL: 'info' }, 'Workers running', 'worker');
  return { ...started, sandbox: { merchant_id: '', test_secret_key: '' } };
}

/**
 * Runs `node SERVER_NODE_ARGS ARGS` from the repository's root with `env` added, its stderr relayed
 * as "[label] …" lines; answers once its stdout has printed `ready` (or rejects when it exits first,
 * or after 30 s).
 */
export async function spawnReady(args: readonly string[], env: Record<string, string>, ready: string, label: string): Promise<{ child: ChildProcess; pid: number; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) process.stderr.write(`[${label}] ${line}\n`);
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes(ready)) resolve();
    });
    void exited.then((code) => reject(new Error(`${label} exited with code ${code}; stdout: ${out}`)));
    setTimeout(() => reject(new Error(`${label} did not start within 30 s; stdout: ${out}`)), 30_000).unref();
  });
  return { child, pid: child.pid!, exited };
}

/** Polls GET /healthz until 200, for 30 s at most; given `exited`, gives up at once when the server exits. */
export async function waitHealthy(port: number, exited?: Promise<number | null>): Promise<void> {
  let dead = false;
  void exited?.then(() => (dead = true));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && !dead) {
    // No keep-alive here: an idle connection left open would hold up the server's graceful shutdown.
    const status = await new Promise<number>((resolve) => {
      http
        .get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', () => resolve(0));
    });
    if (status === 200) return;
    await sleep(50);
  }
  throw new Error(dead ? 'server exited during start' : 'server did not become healthy within 30 s');
}

export async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  await server.exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------- clean-up

/** Runs `ledger verify` on the bench's database and prints its verdict (a bench asserts nothing, but says so). */
export async function verifyLedger(dbUrl: string): Promise<void> {
  const knex = createDatabase({ url: dbUrl, poolMax: 1 });
  try {
    const started = performance.now();
    const broken = await new PostgresLedgerAudit(knex).verify();
    const seconds = ((performance.now() - started) / 1000).toFixed(2);
    console.log(`ledger verify      ${broken ? `BROKEN: ${broken.invariant}: ${broken.detail}` : 'every invariant holds'} (${seconds} s)`);
  } catch (err) {
    log(`ledger verify could not run: ${err}`);
  } finally {
    await knex.destroy();
  }
}

/**
 * The end of a run: drops the bench database (or, with BENCH_KEEP_DB=1, prints its URL), closes
 * the admin connection and deletes the bench's NATS stream (when it had one). Failures are logged, not thrown.
 */
export async function removeBenchState(opts: { admin: Knex; dbName: string; dbUrl: string; dbCreated: boolean; natsStream: string | undefined }): Promise<void> {
  const { admin, dbName, dbUrl, dbCreated, natsStream } = opts;
  if (dbCreated) await verifyLedger(dbUrl);
  if (dbCreated && !KEEP_DB) {
    await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [dbName]).catch((err) => log(`dropping ${dbName}: ${err}`));
  } else if (dbCreated) {
    log(`kept database ${dbUrl}`);
  }
  await admin.destroy();
  if (natsStream === undefined) return;
  try {
    const nc = await connectNats({ servers: NATS_URL, timeout: 3000 });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.delete(natsStream).catch((err) => {
        if (!/stream not found/i.test(String(err))) throw err;
      });
    } finally {
      await nc.close();
    }
  } catch (err) {
    log(`deleting NATS stream ${natsStream}: ${err}`);
  }
}

// ---------------------------------------------------------------- figures

/** The p-th percentile (nearest rank) of ascending values; NaN when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
