// The floor of the fixed stack: what a minimal server on Node + Fastify + Knex/pg costs per order
// on this machine, step by step, to set bench/orders.ts's "CPU per order" and peak RSS against.
// Each step (see bench/floor-server.ts) runs as a child process with the real server's node flags,
// so its CPU (/proc/PID/stat) and memory (/proc/PID/status) are its own; the load is that of
// bench/orders.ts: closed-loop keep-alive clients posting the same order body to POST /v1/orders.
//
//   npm run bench:floor
//   BENCH_SECONDS=5 BENCH_FLOOR_VARIANTS=node-http,fastify npm run bench:floor
//
// Environment (all optional):
//   BENCH_SECONDS           measured seconds of each step (default 10)
//   BENCH_WARMUP_SECONDS    unmeasured load before each step (default 2)
//   BENCH_CONCURRENCY       concurrent clients (default 50)
//   BENCH_FLOOR_VARIANTS    comma-separated steps to run (default all, in order)
//   BENCH_POSTGRES_URL      server to create the floor database on (default postgres://postgres@127.0.0.1:5432)
//   BENCH_SERVER_NODE_ARGS  node flags of the server (default "--max-semi-space-size=8", as npm start)
//   BENCH_KEEP_DB=1         do not drop the database at the end (prints its URL)
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { createDatabase } from '../src/kernel/adapters/postgres/database.ts';
import { memoryOf, runLoad } from './load.ts';
import { FLOOR_TABLE_SQL, FLOOR_VARIANTS, type FloorVariant } from './floor-server.ts';
import { cpuSecondsOf, envInt, freePort, KEEP_DB, log, machineCpu, percentile, POSTGRES_URL, SERVER_NODE_ARGS, spawnReady } from './support.ts';

const SECONDS = envInt('BENCH_SECONDS', 10);
const WARMUP_SECONDS = envInt('BENCH_WARMUP_SECONDS', 2);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 50);
const VARIANTS: readonly FloorVariant[] = (() => {
  const raw = process.env.BENCH_FLOOR_VARIANTS?.trim();
  if (!raw) return FLOOR_VARIANTS;
  const names = raw.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!(FLOOR_VARIANTS as readonly string[]).includes(name)) throw new Error(`BENCH_FLOOR_VARIANTS: unknown step "${name}" (known: ${FLOOR_VARIANTS.join(', ')})`);
  }
  return names as FloorVariant[];
})();
/** Issue 12's aims, as bench/orders.ts checks them. */
const AIM = { cpuMs: 0.4, rssMiB: 150 };

// ---------------------------------------------------------------- processes

interface FloorServer {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<number | null>;
}

/** Starts bench/floor-server.ts for one step; answers once it listens. */
function startFloorServer(variant: FloorVariant, port: number, dbUrl: string): Promise<FloorServer> {
  return spawnReady(['bench/floor-server.ts'], { FLOOR_VARIANT: variant, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: dbUrl }, 'floor server ready', `floor server (${variant})`);
}

async function stopFloorServer(server: FloorServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await server.exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------- main

interface StepResult {
  variant: FloorVariant;
  reqPerS: number;
  cpuMsPerReq: number;
  p50: number;
  p99: number;
  peakRssMiB: number;
  restRssMiB: number;
  ok: number;
  errors: number;
  serverCores: number;
  clientCores: number;
  machineCores: number;
  /** CPU of the Postgres backends serving the step, ms per order (0 for the steps without a database). */
  pgMsPerReq: number;
  /** Cores the rest of the machine (other processes) used meanwhile. */
  otherCores: number;
}

/** CPU seconds used so far by the backends connected to `dbName` (the step's pool, and the bench's idle connection). */
async function backendCpu(admin: Knex, dbName: string): Promise<Map<number, number>> {
  const rows = ((await admin.raw('SELECT pid FROM pg_stat_activity WHERE datname = ?', [dbName])) as { rows: { pid: number }[] }).rows;
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    const seconds = await cpuSecondsOf(pid).catch(() => undefined);
    if (seconds !== undefined) cpu.set(pid, seconds);
  }
  return cpu;
}

const MiB = 1024 * 1024;

async function runStep(variant: FloorVariant, db: { admin: Knex; name: string; url: string }, id: string): Promise<StepResult> {
  const port = await freePort();
  const server = await startFloorServer(variant, port, db.url);
  try {
    await sleep(500); // let the start's garbage settle before reading the resting RSS
    const rest = await memoryOf(server.pid);
    if (WARMUP_SECONDS > 0) {
      const warm = await runLoad({ port, apiKey: 'sk_test_floor', concurrency: CONCURRENCY, seconds: WARMUP_SECONDS, keyPrefix: `warm-${id}-` });
      if (warm.errors) log(`${variant} warm-up: ${warm.errors} errors, e.g. ${warm.samples[0]}`);
    }
    const cpu0 = await cpuSecondsOf(server.pid);
    const client0 = process.cpuUsage();
    const machine0 = await machineCpu();
    // The pool's connections opened during the warm-up and stay open (idle timeouts of 10 s and more).
    const pg0 = await backendCpu(db.admin, db.name);
    const result = await runLoad({ port, apiKey: 'sk_test_floor', concurrency: CONCURRENCY, seconds: SECONDS, keyPrefix: `bench-${id}-` });
    const sorted = Float64Array.from(result.latencies).sort();
    const serverCpu = (await cpuSecondsOf(server.pid)) - cpu0;
    const clientUs = process.cpuUsage(client0);
    const machine1 = await machineCpu();
    let pgCpu = 0;
    for (const [pid, seconds] of await backendCpu(db.admin, db.name)) pgCpu += seconds - (pg0.get(pid) ?? seconds);
    const memory = await memoryOf(server.pid);
    if (result.errors) log(`${variant}: ${result.errors} errors, e.g. ${result.samples[0]}`);
    const reqPerS = result.ok / result.elapsedS;
    const step: StepResult = {
      variant,
      reqPerS,
      cpuMsPerReq: result.ok ? (1000 * serverCpu) / result.ok : Number.NaN,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      peakRssMiB: memory.hwm / MiB,
      restRssMiB: rest.rss / MiB,
      ok: result.ok,
      errors: result.errors,
      serverCores: serverCpu / result.elapsedS,
      clientCores: (clientUs.user + clientUs.system) / 1e6 / result.elapsedS,
      machineCores: (machine1.busy - machine0.busy) / result.elapsedS,
      pgMsPerReq: result.ok ? (1000 * pgCpu) / result.ok : 0,
      otherCores: 0,
    };
    step.otherCores = Math.max(0, step.machineCores - step.serverCores - step.clientCores - pgCpu / result.elapsedS);
    log(
      `${variant}: ${reqPerS.toFixed(0)} req/s, ${step.cpuMsPerReq.toFixed(3)} ms CPU/req, p50 ${step.p50.toFixed(1)} p99 ${step.p99.toFixed(1)} ms, ` +
        `peak ${step.peakRssMiB.toFixed(1)} MiB, rest ${step.restRssMiB.toFixed(1)} MiB`,
    );
    return step;
  } finally {
    await stopFloorServer(server);
  }
}

async function main(): Promise<void> {
  const id = randomBytes(5).toString('hex');
  const dbName = `checkout_floor_${id}`;
  const dbUrl = `${POSTGRES_URL}/${dbName}`;
  const admin = createDatabase({ url: `${POSTGRES_URL}/postgres`, poolMax: 1 });
  let dbCreated = false;
  const db = createDatabase({ url: dbUrl, poolMax: 1 });
  const steps: StepResult[] = [];
  try {
    if (VARIANTS.some((v) => v !== 'node-http' && v !== 'fastify')) {
      await admin.raw('CREATE DATABASE ??', [dbName]);
      dbCreated = true;
      await db.raw(FLOOR_TABLE_SQL);
    }
    log(`database ${dbCreated ? dbName : '(none)'}; ${CONCURRENCY} clients, ${WARMUP_SECONDS}s warm-up + ${SECONDS}s per step; node ${SERVER_NODE_ARGS.join(' ')}`);
    for (const variant of VARIANTS) {
      // Every step inserts into an empty table.
      if (dbCreated) await db.raw('TRUNCATE orders');
      steps.push(await runStep(variant, { admin, name: dbName, url: dbUrl }, id));
    }
  } finally {
    await db.destroy();
    if (dbCreated && !KEEP_DB) await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [dbName]).catch((err) => log(`dropping ${dbName}: ${err}`));
    else if (dbCreated) log(`kept database ${dbUrl}`);
    await admin.destroy();
  }

  const pad = (s: string, n: number) => s.padStart(n);
  const lines = [
    `Floor of the fixed stack, POST /v1/orders  ${CONCURRENCY} clients, ${SECONDS} s per step, node ${process.version} ${SERVER_NODE_ARGS.join(' ')}, ${cpus().length} CPUs`,
    `  ${'step'.padEnd(22)}${pad('req/s', 8)}${pad('CPU ms/req', 12)}${pad('(+step)', 9)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('peak RSS', 10)}${pad('rest RSS', 10)}${pad('errors', 8)}${pad('pg ms/req', 11)}${pad('other cores', 13)}`,
  ];
  let previous: StepResult | undefined;
  for (const s of steps) {
    const delta = previous ? `${s.cpuMsPerReq >= previous.cpuMsPerReq ? '+' : ''}${(s.cpuMsPerReq - previous.cpuMsPerReq).toFixed(3)}` : '';
    lines.push(
      `  ${s.variant.padEnd(22)}${pad(s.reqPerS.toFixed(0), 8)}${pad(s.cpuMsPerReq.toFixed(3), 12)}${pad(delta, 9)}${pad(s.p50.toFixed(1), 8)}${pad(s.p99.toFixed(1), 8)}` +
        `${pad(`${s.peakRssMiB.toFixed(1)} MiB`, 10)}${pad(`${s.restRssMiB.toFixed(1)} MiB`, 10)}${pad(String(s.errors), 8)}` +
        `${pad(s.pgMsPerReq.toFixed(3), 11)}${pad(s.otherCores.toFixed(2), 13)}`,
    );
    previous = s;
  }
  lines.push(
    `  CPU ms/req: the server process's user+system CPU over the measured window / orders answered; pg ms/req: the same for its Postgres backends.`,
    `  RSS: peak = VmHWM, rest = VmRSS 0.5 s after start. Other cores: the machine's busy CPU less server, load generator and backends.`,
    `  aims (issue 12): server CPU per order <= ${AIM.cpuMs} ms, peak RSS <= ${AIM.rssMiB} MiB; compare with npm run bench:orders.`,
  );
  const last = steps.at(-1);
  if (last) {
    lines.push(
      `  the floor (${last.variant}) uses ${((100 * last.cpuMsPerReq) / AIM.cpuMs).toFixed(0)}% of the CPU aim and ${((100 * last.peakRssMiB) / AIM.rssMiB).toFixed(0)}% of the RSS aim, before any of the service's own work.`,
    );
  }
  const busiest = Math.max(0, ...steps.map((s) => s.otherCores));
  if (busiest > 0.25) lines.push(`NOTE: other processes used up to ${busiest.toFixed(2)} cores during a step; the figures are skewed by them.`);
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(
    `${JSON.stringify({
      seconds: SECONDS,
      concurrency: CONCURRENCY,
      node: process.version,
      node_args: SERVER_NODE_ARGS.join(' '),
      steps: steps.map((s) => ({
        variant: s.variant,
        req_per_s: Math.round(s.reqPerS),
        server_cpu_ms_per_req: +s.cpuMsPerReq.toFixed(3),
        p50_ms: +s.p50.toFixed(2),
        p99_ms: +s.p99.toFixed(2),
        peak_rss_mib: +s.peakRssMiB.toFixed(1),
        rest_rss_mib: +s.restRssMiB.toFixed(1),
        ok: s.ok,
        errors: s.errors,
        server_cpu_cores: +s.serverCores.toFixed(2),
        client_cpu_cores: +s.clientCores.toFixed(2),
        machine_cpu_cores: +s.machineCores.toFixed(2),
        pg_backend_cpu_ms_per_req: +s.pgMsPerReq.toFixed(3),
        other_cpu_cores: +s.otherCores.toFixed(2),
      })),
    })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench/floor: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
