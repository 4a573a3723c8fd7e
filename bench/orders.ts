// Load benchmark of POST /v1/orders against a real server process, next to the
// rate at which Postgres alone commits the same transaction (pgbench).
//
//   npm run bench:orders
//   BENCH_SECONDS=20 BENCH_CONCURRENCY=50 npm run bench:orders
//
// Environment (all optional):
//   BENCH_SECONDS           measured seconds of each phase (default 20)
//   BENCH_CONCURRENCY       concurrent clients / pgbench connections (default 50)
//   BENCH_WARMUP_SECONDS    unmeasured load before the service phase (default 3)
//   BENCH_POSTGRES_URL      server to create the bench database on (default postgres://postgres@127.0.0.1:5432)
//   BENCH_SERVER_POSTGRES_URL  where the server under test reaches that database, e.g. through PgBouncer (default the same)
//   NATS_URL                (default nats://127.0.0.1:4222)
//   BENCH_PGBENCH           pgbench binary (default pgbench on PATH)
//   BENCH_SKIP_PGBENCH=1    only the service phase
//   BENCH_OPEN_SECONDS      seconds of the open-loop phase at half the measured rate (default 10; 0 skips it)
//   BENCH_SERVER_ENV        extra server environment, e.g. "SERVE_WORKERS=none"
//   BENCH_SERVER_NODE_ARGS  node flags of the server (default "--max-semi-space-size=8", as npm start), e.g. "--max-semi-space-size=8 --cpu-prof"
//   BENCH_KEEP_DB=1         do not drop the database at the end (prints its URL)
//   BENCH_VERBOSE=1         print the pgbench script and its variables
//
// The load generator speaks HTTP/1.1 over raw keep-alive sockets with
// pre-built requests: it shares the CPUs with the server, so it stays lean.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { createDatabase } from '../src/kernel/adapters/postgres/database.ts';
import { memoryOf, runLoad, runOpenLoop, type LoadResult } from './load.ts';
import {
  cpuSecondsOf,
  envInt,
  freePort,
  log,
  machineCpu,
  NATS_URL,
  percentile,
  POSTGRES_URL,
  removeBenchState,
  SERVER_ENV,
  serverDatabaseUrl,
  startServer,
  stopServer,
  waitHealthy,
  type Server,
} from './support.ts';

const SECONDS = envInt('BENCH_SECONDS', 20);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 50);
const WARMUP_SECONDS = envInt('BENCH_WARMUP_SECONDS', 3);
const PGBENCH = process.env.BENCH_PGBENCH?.trim() || 'pgbench';
const SKIP_PGBENCH = process.env.BENCH_SKIP_PGBENCH === '1';
const VERBOSE = process.env.BENCH_VERBOSE === '1';
const OPEN_SECONDS = envInt('BENCH_OPEN_SECONDS', 10);
/** Issue 12's aims: a share of the pgbench ceiling, server CPU and memory per order, open-loop p99 at half the rate. */
const AIM = { ratio: 0.6, cpuMs: 0.4, rssMiB: 150, openP99Ms: 50 };

// ---------------------------------------------------------------- processes

/**
 * Samples the CPU time of a changing set of processes every 500 ms; stop()
 * answers the cores they used over the sampled window.
 */
function trackCpu(pids: () => Promise<readonly number[]>): { stop(): Promise<number> } {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let t0 = 0;
  let t1 = 0;
  const sample = async () => {
    const now = performance.now();
    for (const pid of await pids().catch(() => [])) {
      const cpu = await cpuSecondsOf(pid).catch(() => undefined);
      if (cpu === undefined) continue;
      if (!first.has(pid)) first.set(pid, cpu);
      last.set(pid, cpu);
    }
    if (t0 === 0) t0 = now;
    t1 = now;
  };
  let pending = sample();
  const timer = setInterval(() => (pending = pending.then(sample)), 500);
  return {
    async stop() {
      clearInterval(timer);
      await pending;
      await sample();
      let used = 0;
      for (const [pid, cpu] of last) used += cpu - first.get(pid)!;
      return t1 > t0 ? used / ((t1 - t0) / 1000) : 0;
    },
  };
}

// ------------------------------------------------------------------- pgbench

/** A pgbench script and the variables (-D) it reads. */
interface PgbenchScript {
  readonly text: string;
  readonly vars: Record<string, string>;
}

/**
 * The create transaction of PostgresUnitOfWork (BEGIN; INSERT idempotency_keys
 * ... ON CONFLICT DO NOTHING RETURNING key; INSERT orders; INSERT events;
 * COMMIT) as a pgbench script. The column lists and values are those of a row
 * the service just wrote, read back from the live schema, so the script keeps
 * matching the service as migrations add columns: ids and other unique text
 * columns get random values, timestamps now(), everything else is sent as a
 * parameter with the service's own value.
 */
async function pgbenchScript(knex: Knex, merchantId: string): Promise<PgbenchScript> {
  const vars: Record<string, string> = {};
  // Ids shared by the three statements, and columns the service leaves to their default.
  const fixed: Record<string, Record<string, string>> = {
    idempotency_keys: { key: "'idem_' || :r::text", resource_id: "'ord_' || :r::text" },
    orders: { id: "'ord_' || :r::text" },
    events: { id: "'evt_' || :r::text", order_id: "'ord_' || :r::text", published_at: 'NULL' },
  };
  const insert = async (table: string): Promise<string> => {
    const columns = (
      (await knex.raw(
        `SELECT c.column_name AS name, c.data_type AS type,
                EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                        WHERE i.indrelid = ?::regclass AND i.indisunique AND a.attname = c.column_name) AS is_unique
           FROM information_schema.columns c
          WHERE c.table_schema = current_schema() AND c.table_name = ?
          ORDER BY c.ordinal_position`,
        [table, table],
      )) as { rows: { name: string; type: string; is_unique: boolean }[] }
    ).rows;
    const sample = ((await knex.raw(`SELECT to_jsonb(t) AS row FROM ?? t LIMIT 1`, [table])) as { rows: { row: Record<string, unknown> }[] }).rows[0]?.row;
    if (!sample) throw new Error(`no ${table} row to model the pgbench script on`);
    const names: string[] = [];
    const values: string[] = [];
    for (const column of columns) {
      const value = sample[column.name];
      names.push(column.name);
      const sql = fixed[table]?.[column.name];
      if (sql) values.push(sql);
      else if (value === null || value === undefined) values.push('NULL');
      else if (column.type.startsWith('timestamp')) values.push('now()');
      else if (column.name === 'merchant_id') values.push(':merchant_id');
      else if (column.is_unique && column.type === 'text') values.push(`'${column.name}_' || :r::text`);
      else {
        const v = `${table}_${column.name}`;
        vars[v] = typeof value === 'string' ? value : JSON.stringify(value);
        values.push(`:${v}`);
      }
    }
    return `INSERT INTO ${table} (${names.join(', ')}) VALUES (${values.join(', ')})`;
  };
  vars.merchant_id = merchantId;
  const text = [
    String.raw`\set r random(1000000000000000000, 9223372036854775806)`,
    'BEGIN;',
    `${await insert('idempotency_keys')} ON CONFLICT (merchant_id, livemode, key) DO NOTHING RETURNING key;`,
    `${await insert('orders')};`,
    `${await insert('events')};`,
    'COMMIT;',
    '',
  ].join('\n');
  return { text, vars };
}

interface PgbenchResult {
  tps: number;
  latencyMs: number;
  /** Percentiles of the per-transaction log (pgbench -l), ms. */
  p50: number;
  p95: number;
  p99: number;
  transactions: number;
  failed: number;
}

async function runPgbench(dbName: string, script: PgbenchScript, onStart: (pid: number) => void): Promise<PgbenchResult> {
  const url = new URL(POSTGRES_URL);
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-orders-'));
  const file = path.join(dir, 'create-order.sql');
  await writeFile(file, script.text);
  const args = [
    '-n', // no vacuum of pgbench_* tables
    '-l', '--log-prefix', path.join(dir, 'tx'), // per-transaction latencies, for percentiles
    '-M', 'prepared',
    '-c', String(CONCURRENCY),
    '-j', '2',
    '-T', String(SECONDS),
    '-f', file,
    // An embedded Postgres's URL names its socket's directory, percent-encoded (it listens on no TCP port).
    '-h', decodeURIComponent(url.hostname),
    '-p', url.port || '5432',
    '-U', decodeURIComponent(url.username || 'postgres'),
    ...Object.entries(script.vars).flatMap(([k, v]) => ['-D', `${k}=${v}`]),
    dbName,
  ];
  try {
    const child = spawn(PGBENCH, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PGPASSWORD: decodeURIComponent(url.password) } });
    if (child.pid) onStart(child.pid);
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out);
    if (code !== 0 || !tps) throw new Error(`pgbench failed (exit ${code}):\n${out}\n${err}`);
    const latencies: number[] = [];
    for (const name of await readdir(dir)) {
      if (!name.startsWith('tx.')) continue;
      for (const line of (await readFile(path.join(dir, name), 'utf8')).split('\n')) {
        const us = Number(line.split(' ')[2]);
        if (line && Number.isFinite(us)) latencies.push(us / 1000);
      }
    }
    const sorted = Float64Array.from(latencies).sort();
    return {
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      p99: percentile(sorted, 99),
      tps: Number(tps[1]),
      latencyMs: Number(/latency average = ([\d.]+) ms/.exec(out)?.[1] ?? Number.NaN),
      transactions: Number(/number of transactions actually processed: (\d+)/.exec(out)?.[1] ?? 0),
      failed: Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------- main

const mib = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);

async function main(): Promise<void> {
  const id = randomBytes(5).toString('hex');
  const dbName = `checkout_bench_${id}`;
  const dbUrl = `${POSTGRES_URL}/${dbName}`;
  const natsStream = `BENCH_ORDERS_${id}`;
  const admin = createDatabase({ url: `${POSTGRES_URL}/postgres`, poolMax: 1 });
  let server: Server | undefined;
  let dbCreated = false;
  try {
    await admin.raw('CREATE DATABASE ??', [dbName]);
    dbCreated = true;
    const port = await freePort();
    log(`database ${dbName}, server on 127.0.0.1:${port}, stream ${natsStream}; ${CONCURRENCY} clients, ${WARMUP_SECONDS}s warm-up + ${SECONDS}s`);
    server = await startServer({
      DATABASE_URL: serverDatabaseUrl(dbName),
      PORT: String(port),
      HOST: '127.0.0.1',
      NATS_URL,
      NATS_STREAM: natsStream,
      NATS_SUBJECT_PREFIX: `bench.${id}`,
      LOG_LEVEL: 'warn',
      // The bench measures capacity with one key: the per-key rate limit would measure itself.
      RATE_LIMIT_PER_SECOND: '0',
      ...SERVER_ENV,
    });
    await waitHealthy(port, server.exited);
    const idleRss = (await memoryOf(server.pid)).rss;
    const backendPids = async () =>
      ((await admin.raw('SELECT pid FROM pg_stat_activity WHERE datname = ?', [dbName])) as { rows: { pid: number }[] }).rows.map((r) => r.pid);
    const load = { port, apiKey: server.sandbox.test_secret_key, concurrency: CONCURRENCY };

    if (WARMUP_SECONDS > 0) {
      const warm = await runLoad({ ...load, seconds: WARMUP_SECONDS, keyPrefix: `warm-${id}-` });
      log(`warm-up: ${warm.ok} orders, ${warm.errors} errors`);
    }

    const serverCpu0 = await cpuSecondsOf(server.pid);
    const clientCpu0 = process.cpuUsage();
    const machine0 = await machineCpu();
    const pgTracker = trackCpu(backendPids);
    let peakRss = 0;
    const sampler = setInterval(() => {
      memoryOf(server!.pid).then(
        (m) => (peakRss = Math.max(peakRss, m.rss)),
        () => undefined,
      );
    }, 250);
    const result = await runLoad({ ...load, seconds: SECONDS, keyPrefix: `bench-${id}-` });
    clearInterval(sampler);
    const pgCores = await pgTracker.stop();
    const serverCpu = (await cpuSecondsOf(server.pid)) - serverCpu0;
    const clientCpuUs = process.cpuUsage(clientCpu0);
    const clientCpu = (clientCpuUs.user + clientCpuUs.system) / 1e6;
    const machine1 = await machineCpu();
    const memory = await memoryOf(server.pid);
    peakRss = Math.max(peakRss, memory.rss);

    const closedRate = result.ok / result.elapsedS;
    let open: (LoadResult & { behind: number; rate: number }) | undefined;
    if (OPEN_SECONDS > 0 && closedRate > 0) {
      const rate = Math.max(1, Math.round(closedRate / 2));
      log(`open loop: ${rate} orders/s (half the closed-loop rate) for ${OPEN_SECONDS} s`);
      open = { ...(await runOpenLoop({ port, apiKey: load.apiKey, rate, seconds: OPEN_SECONDS, keyPrefix: `open-${id}-` })), rate };
      const m = await memoryOf(server.pid);
      peakRss = Math.max(peakRss, m.hwm);
    }

    // The rows the service wrote model the pgbench transaction.
    const knex = createDatabase({ url: dbUrl, poolMax: 1 });
    let script: PgbenchScript;
    let counts: Record<string, number>;
    try {
      script = await pgbenchScript(knex, server.sandbox.merchant_id);
      const count = async (table: string) => Number((await knex(table).count<{ n: string }[]>('* as n'))[0]!.n);
      counts = { orders: await count('orders'), events: await count('events'), idempotency_keys: await count('idempotency_keys') };
    } finally {
      await knex.destroy();
    }
    await stopServer(server);

    const sorted = Float64Array.from(result.latencies).sort();
    const ordersPerS = result.ok / result.elapsedS;
    const p50 = percentile(sorted, 50);
    const p95 = percentile(sorted, 95);
    const p99 = percentile(sorted, 99);
    const max = sorted.length ? sorted[sorted.length - 1]! : Number.NaN;
    const machineCores = (machine1.busy - machine0.busy) / result.elapsedS;

    log(`service phase done: ${counts.orders} orders / ${counts.events} events / ${counts.idempotency_keys} keys in the database`);
    let pg: (PgbenchResult & { pgCores: number; pgbenchCores: number; machineCores: number }) | undefined;
    if (!SKIP_PGBENCH) {
      log(`pgbench: -c ${CONCURRENCY} -j 2 -T ${SECONDS} -M prepared`);
      if (VERBOSE) log(`pgbench script:\n${script.text}variables: ${JSON.stringify(script.vars)}`);
      const m0 = await machineCpu();
      const tracker = trackCpu(backendPids);
      let pgbenchPid = 0;
      const pgbenchTracker = trackCpu(async () => (pgbenchPid ? [pgbenchPid] : []));
      const t0 = performance.now();
      const r = await runPgbench(dbName, script, (pid) => (pgbenchPid = pid));
      const m1 = await machineCpu();
      pg = {
        ...r,
        pgCores: await tracker.stop(),
        pgbenchCores: await pgbenchTracker.stop(),
        machineCores: (m1.busy - m0.busy) / ((performance.now() - t0) / 1000),
      };
    }

    const otherService = Math.max(0, machineCores - serverCpu / result.elapsedS - pgCores - clientCpu / result.elapsedS);
    const lines = [
      `POST /v1/orders  ${CONCURRENCY} clients, ${result.elapsedS.toFixed(1)} s`,
      `  orders/s        ${ordersPerS.toFixed(0)}  (${result.ok} created)`,
      `  latency ms      p50 ${p50.toFixed(1)}  p95 ${p95.toFixed(1)}  p99 ${p99.toFixed(1)}  max ${max.toFixed(1)}`,
      `  errors          ${result.errors}${result.samples.length ? `  e.g. ${result.samples[0]}` : ''}`,
      `  server RSS      peak ${mib(Math.max(memory.hwm, peakRss))} MiB (VmHWM), ${mib(idleRss)} MiB idle before load, ${mib(memory.rss)} MiB at end`,
      `  CPU per order   server ${((1000 * serverCpu) / result.elapsedS / ordersPerS).toFixed(2)} ms, postgres backends ${((1000 * pgCores) / ordersPerS).toFixed(2)} ms`,
      `  CPU (cores)     server ${(serverCpu / result.elapsedS).toFixed(2)}, postgres backends ${pgCores.toFixed(2)}, load generator ${(clientCpu / result.elapsedS).toFixed(2)}, whole machine ${machineCores.toFixed(2)} of ${cpus().length} (other processes ${otherService.toFixed(2)})`,
    ];
    if (pg) {
      lines.push(
        `Postgres alone (pgbench, same transaction)  ${CONCURRENCY} connections`,
        `  tps             ${pg.tps.toFixed(0)}  (${pg.failed} failed)`,
        `  latency ms      p50 ${pg.p50.toFixed(1)}  p95 ${pg.p95.toFixed(1)}  p99 ${pg.p99.toFixed(1)}  (avg ${pg.latencyMs.toFixed(1)})`,
        `  CPU per tx      postgres backends ${((1000 * pg.pgCores) / pg.tps).toFixed(2)} ms`,
        `  CPU (cores)     postgres backends ${pg.pgCores.toFixed(2)}, pgbench ${pg.pgbenchCores.toFixed(2)}, whole machine ${pg.machineCores.toFixed(2)} of ${cpus().length} (other processes ${Math.max(0, pg.machineCores - pg.pgCores - pg.pgbenchCores).toFixed(2)})`,
        `service / Postgres  ${((100 * ordersPerS) / pg.tps).toFixed(1)}%  (aim >= ${100 * AIM.ratio}%: ${ordersPerS >= pg.tps * AIM.ratio ? 'met' : 'MISSED'})`,
      );
    }
    const openSorted = open ? Float64Array.from(open.latencies).sort() : undefined;
    if (open && openSorted) {
      lines.push(
        `Open loop at ${open.rate} orders/s (half the closed-loop rate), ${open.elapsedS.toFixed(1)} s`,
        `  answered        ${open.ok} created, ${open.errors} errors${open.samples.length ? `  e.g. ${open.samples[0]}` : ''}`,
        `  latency ms      p50 ${percentile(openSorted, 50).toFixed(1)}  p99 ${percentile(openSorted, 99).toFixed(1)}  max ${openSorted.length ? openSorted[openSorted.length - 1]!.toFixed(1) : 'n/a'}  (from the moment each was due; aim p99 < ${AIM.openP99Ms} ms: ${percentile(openSorted, 99) < AIM.openP99Ms ? 'met' : 'MISSED'})`,
      );
    }
    const cpuPerOrder = (1000 * serverCpu) / result.elapsedS / ordersPerS;
    const peakMiB = Math.max(memory.hwm, peakRss) / (1024 * 1024);
    lines.push(
      `aims: server CPU per order <= ${AIM.cpuMs} ms: ${cpuPerOrder <= AIM.cpuMs ? 'met' : 'MISSED'}; peak RSS <= ${AIM.rssMiB} MiB: ${peakMiB <= AIM.rssMiB ? 'met' : 'MISSED'}`,
    );
    const otherPg = pg ? Math.max(0, pg.machineCores - pg.pgCores - pg.pgbenchCores) : 0;
    if (Math.max(otherService, otherPg) > 0.25) {
      lines.push(`NOTE: other processes used ${otherService.toFixed(2)} / ${otherPg.toFixed(2)} cores during the service / pgbench phase; the figures are skewed by them.`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `${JSON.stringify({
        seconds: SECONDS,
        concurrency: CONCURRENCY,
        orders_per_s: Math.round(ordersPerS),
        ok: result.ok,
        errors: result.errors,
        p50_ms: +p50.toFixed(2),
        p95_ms: +p95.toFixed(2),
        p99_ms: +p99.toFixed(2),
        max_ms: +max.toFixed(2),
        server_peak_rss_mib: +mib(Math.max(memory.hwm, peakRss)),
        server_cpu_cores: +(serverCpu / result.elapsedS).toFixed(2),
        client_cpu_cores: +(clientCpu / result.elapsedS).toFixed(2),
        machine_cpu_cores: +machineCores.toFixed(2),
        pg_backend_cpu_cores: +pgCores.toFixed(2),
        server_idle_rss_mib: +mib(idleRss),
        pg_tps: pg ? Math.round(pg.tps) : null,
        pg_p50_ms: pg ? +pg.p50.toFixed(2) : null,
        pg_p99_ms: pg ? +pg.p99.toFixed(2) : null,
        ratio: pg ? +(ordersPerS / pg.tps).toFixed(3) : null,
        pgbench_backend_cpu_cores: pg ? +pg.pgCores.toFixed(2) : null,
        pgbench_machine_cpu_cores: pg ? +pg.machineCores.toFixed(2) : null,
        pgbench_client_cpu_cores: pg ? +pg.pgbenchCores.toFixed(2) : null,
        server_cpu_ms_per_order: +cpuPerOrder.toFixed(3),
        open_rate: open ? open.rate : null,
        open_p50_ms: openSorted ? +percentile(openSorted, 50).toFixed(2) : null,
        open_p99_ms: openSorted ? +percentile(openSorted, 99).toFixed(2) : null,
        open_errors: open ? open.errors : null,
      })}\n`,
    );
  } finally {
    if (server) await stopServer(server).catch((err) => log(`stopping server: ${err}`));
    await removeBenchState({ admin, dbName, dbUrl, dbCreated, natsStream });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench/orders: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
