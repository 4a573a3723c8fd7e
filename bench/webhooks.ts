// Webhook delivery benchmark: payments at a fixed rate through the API of a real server process
// (its own database and JetStream stream), an endpoint subscribed to order.paid, and a fast local
// receiver measuring how long each order.paid took from the payment's commit to its arrival.
//
//   npm run bench:webhooks
//   BENCH_SECONDS=20 BENCH_RATE=200 npm run bench:webhooks
//
// Environment (all optional):
//   BENCH_SECONDS           measured seconds of load (default 20)
//   BENCH_RATE              payments per second: POST /v1/orders then simulate_transfer (default 200)
//   BENCH_WARMUP_SECONDS    unmeasured load at the same rate before (default 2)
//   BENCH_MAX_IN_FLIGHT     payments in progress at most; the generator falls behind beyond (default 100)
//   BENCH_POSTGRES_URL      server to create the bench database on (default postgres://postgres@127.0.0.1:5432)
//   BENCH_SERVER_POSTGRES_URL  where the server under test reaches that database, e.g. through PgBouncer (default the same)
//   BENCH_EVENTS            how the server carries events: nats (default: JetStream at NATS_URL) or
//                           postgres-outbox (no NATS_URL: the event stream in Postgres)
//   NATS_URL                (default nats://127.0.0.1:4222)
//   BENCH_SERVER_NODE_ARGS  node flags of the server (default "--max-semi-space-size=8", as npm start), e.g. "--max-semi-space-size=8 --cpu-prof"
//   BENCH_KEEP_DB=1         do not drop the database at the end (prints its URL)
//   BENCH_DISPATCHER=apart  run the dispatcher as a process of its own (checkout worker --only dispatcher);
//                           the CPU figures then add up both processes
//
// Latency is measured two ways, both on this machine's clock:
//   commit -> arrival    the order.paid body's `created` (the payment's commit) to the receiver's arrival
//   answer -> arrival    the simulate_transfer response reaching the client to the receiver's arrival
// The server runs the whole service (gateway, relay, dispatcher) as `checkout serve` would, or, with
// BENCH_DISPATCHER=apart, everything but the dispatcher, which runs in a process of its own.
// "published" in the stages is the relay's mark: on JetStream, or appended to the event stream in Postgres.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '../src/kernel/adapters/postgres/database.ts';
import { orderBody } from '../test/support/order-fixtures.ts';
import {
  cpuSecondsOf,
  envInt,
  EVENTS,
  freePort,
  log,
  machineCpu,
  NATS_URL,
  percentile,
  POSTGRES_URL,
  removeBenchState,
  serverDatabaseUrl,
  startServer,
  startWorker,
  stopServer,
  waitHealthy,
  type Server,
} from './support.ts';

const SECONDS = envInt('BENCH_SECONDS', 20);
const RATE = envInt('BENCH_RATE', 200);
const WARMUP_SECONDS = envInt('BENCH_WARMUP_SECONDS', 2);
const MAX_IN_FLIGHT = envInt('BENCH_MAX_IN_FLIGHT', 100);
const DISPATCHER_APART = process.env.BENCH_DISPATCHER === 'apart';
/** Issue 12's aim: server CPU per paid and delivered payment. */
const TARGET_CPU_MS = 2;
const TARGET_P99_MS = 250;

// ---------------------------------------------------------------- receiver

interface Arrival {
  /** Date.now() at arrival of the complete body. */
  readonly at: number;
  readonly created: number;
  readonly orderId: string;
  readonly reference: string;
}

/** Answers 204 at once; keeps the first arrival of each event id and counts repeats. */
async function startReceiver(): Promise<{ url: string; arrivals: Map<string, Arrival>; duplicates: () => number; close(): Promise<void> }> {
  const arrivals = new Map<string, Arrival>();
  let duplicates = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(204).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; created: string; data: { id: string; reference: string } };
      if (arrivals.has(body.id)) duplicates += 1;
      else arrivals.set(body.id, { at, created: Date.parse(body.created), orderId: body.data.id, reference: body.data.reference });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    arrivals,
    duplicates: () => duplicates,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------- load

const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });

function request(port: number, key: string, method: string, urlPath: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: urlPath,
        agent,
        headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
          } catch (err) {
            reject(err as Error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface Payment {
  readonly reference: string;
  /** Date.now() when simulate_transfer answered. */
  readonly paidAnsweredAt: number;
  readonly createMs: number;
  readonly transferMs: number;
}

interface LoadResult {
  readonly payments: Payment[];
  readonly errors: string[];
  readonly startedAt: number;
  readonly elapsedS: number;
  /** Payments the generator could not start on time because MAX_IN_FLIGHT were in progress. */
  readonly behind: number;
}

/** Starts RATE payments per second for `seconds` (open loop, paced on elapsed time). */
async function runLoad(port: number, key: string, seconds: number, prefix: string): Promise<LoadResult> {
  const payments: Payment[] = [];
  const errors: string[] = [];
  let started = 0;
  let inFlight = 0;
  let behind = 0;
  const running = new Set<Promise<void>>();
  const pay = async (n: number) => {
    const reference = `${prefix}-${n}`;
    const t0 = performance.now();
    const order = await request(port, key, 'POST', '/v1/orders', orderBody({ reference }));
    if (order.status !== 201) throw new Error(`create order: HTTP ${order.status} ${JSON.stringify(order.json).slice(0, 200)}`);
    const t1 = performance.now();
    const paid = await request(port, key, 'POST', `/v1/test_helpers/orders/${String(order.json.id)}/simulate_transfer`);
    const paidAnsweredAt = Date.now();
    if (paid.status !== 200) throw new Error(`simulate_transfer: HTTP ${paid.status} ${JSON.stringify(paid.json).slice(0, 200)}`);
    payments.push({ reference, paidAnsweredAt, createMs: t1 - t0, transferMs: performance.now() - t1 });
  };
  const startedAt = Date.now();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  while (performance.now() < end) {
    const due = Math.min(Math.floor(((performance.now() - t0) / 1000) * RATE), seconds * RATE);
    while (started < due) {
      if (inFlight >= MAX_IN_FLIGHT) {
        behind += due - started;
        started = due; // skipped: an open-loop generator does not queue up a backlog of its own
        break;
      }
      const n = started++;
      inFlight += 1;
      const task = pay(n)
        .catch((err: Error) => void (errors.length < 1000 && errors.push(err.message)))
        .finally(() => {
          inFlight -= 1;
          running.delete(task);
        });
      running.add(task);
    }
    await sleep(2);
  }
  await Promise.all(running);
  return { payments, errors, startedAt, elapsedS: (performance.now() - t0) / 1000, behind };
}

function summary(values: number[]): { p50: number; p90: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
}

const fmt = (s: { p50: number; p90: number; p99: number; max: number }) =>
  `p50 ${s.p50.toFixed(0)}  p90 ${s.p90.toFixed(0)}  p99 ${s.p99.toFixed(0)}  max ${s.max.toFixed(0)}`;

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const id = randomBytes(5).toString('hex');
  const dbName = `checkout_bench_${id}`;
  const dbUrl = `${POSTGRES_URL}/${dbName}`;
  const natsStream = EVENTS === 'nats' ? `BENCH_WEBHOOKS_${id}` : undefined;
  const admin = createDatabase({ url: `${POSTGRES_URL}/postgres`, poolMax: 1 });
  const receiver = await startReceiver();
  let server: Server | undefined;
  let dispatcher: Server | undefined;
  let dbCreated = false;
  try {
    await admin.raw('CREATE DATABASE ??', [dbName]);
    dbCreated = true;
    const port = await freePort();
    log(`database ${dbName}, server on 127.0.0.1:${port}, events ${natsStream ? `through NATS, stream ${natsStream}` : 'through Postgres (no NATS)'}; ${RATE} payments/s, ${WARMUP_SECONDS}s warm-up + ${SECONDS}s; dispatcher ${DISPATCHER_APART ? 'in a process of its own' : 'in the server'}`);
    const env = {
      DATABASE_URL: serverDatabaseUrl(dbName),
      PORT: String(port),
      HOST: '127.0.0.1',
      ...(natsStream ? { NATS_URL, NATS_STREAM: natsStream, NATS_SUBJECT_PREFIX: `bench.${id}` } : { NATS_URL: '' }),
      LOG_LEVEL: 'warn',
      // The receiver listens on 127.0.0.1, which the webhook address policy refuses by default.
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // The bench measures capacity with one key: the per-key rate limit would measure itself.
      RATE_LIMIT_PER_SECOND: '0',
    };
    server = await startServer(DISPATCHER_APART ? { ...env, SERVE_WORKERS: 'relay,sweeper,settler,biller,janitor' } : env);
    await waitHealthy(port);
    if (DISPATCHER_APART) dispatcher = await startWorker(env, 'dispatcher');
    const cpuNow = async () => (await cpuSecondsOf(server!.pid)) + (dispatcher ? await cpuSecondsOf(dispatcher.pid) : 0);
    const key = server.sandbox.test_secret_key;
    const endpoint = await request(port, key, 'POST', '/v1/webhook_endpoints', { url: receiver.url, enabled_events: ['order.paid'] });
    if (endpoint.status !== 201) throw new Error(`creating the endpoint: HTTP ${endpoint.status} ${JSON.stringify(endpoint.json)}`);

    if (WARMUP_SECONDS > 0) {
      const warm = await runLoad(port, key, WARMUP_SECONDS, `WARM-${id}`);
      log(`warm-up: ${warm.payments.length} payments, ${warm.errors.length} errors`);
      const deadline = Date.now() + 30_000;
      while (receiver.arrivals.size < warm.payments.length && Date.now() < deadline) await sleep(50);
    }

    const serverCpu0 = await cpuNow();
    const clientCpu0 = process.cpuUsage();
    const machine0 = await machineCpu();
    const result = await runLoad(port, key, SECONDS, `BENCH-${id}`);
    const serverCpu = (await cpuNow()) - serverCpu0;
    const clientCpuUs = process.cpuUsage(clientCpu0);
    const machine1 = await machineCpu();
    const loadEndedAt = Date.now();
    log(`load done: ${result.payments.length} payments, ${result.errors.length} errors; waiting for their order.paid`);

    const measured = new Map(result.payments.map((p) => [p.reference, p]));
    const ours = () => [...receiver.arrivals.values()].filter((a) => measured.has(a.reference));
    const deadline = Date.now() + 60_000;
    while (ours().length < measured.size && Date.now() < deadline) await sleep(50);
    const arrivals = ours();
    const lastArrival = Math.max(...arrivals.map((a) => a.at));

    // Where the time went, per stage, from the service's own tables (same clock).
    const knex = createDatabase({ url: dbUrl, poolMax: 1 });
    let stages: { published: number[]; queued: number[]; attempted: number[] };
    try {
      const rows = (
        (await knex.raw(
          `SELECT extract(epoch FROM e.created_at) * 1000 AS c, extract(epoch FROM e.published_at) * 1000 AS p,
                  extract(epoch FROM d.created_at) * 1000 AS q,
                  (SELECT extract(epoch FROM min(a.attempted_at)) * 1000 FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id) AS a
             FROM events e JOIN webhook_deliveries d ON d.event_id = e.id
            WHERE e.type = 'order.paid' AND e.reference LIKE ?`,
          [`BENCH-${id}-%`],
        )) as { rows: { c: string; p: string; q: string; a: string | null }[] }
      ).rows;
      stages = {
        published: rows.map((r) => Number(r.p) - Number(r.c)),
        queued: rows.map((r) => Number(r.q) - Number(r.p)),
        // attempted_at is taken when the answer is in: this stage includes the HTTP round trip.
        attempted: rows.filter((r) => r.a !== null).map((r) => Number(r.a) - Number(r.q)),
      };
    } finally {
      await knex.destroy();
    }
    await stopServer(server);
    if (dispatcher) await stopServer(dispatcher);

    const commitToArrival = summary(arrivals.map((a) => a.at - a.created));
    const answerToArrival = summary(arrivals.map((a) => a.at - measured.get(a.reference)!.paidAnsweredAt));
    const createMs = summary(result.payments.map((p) => p.createMs));
    const transferMs = summary(result.payments.map((p) => p.transferMs));
    const paymentsPerS = result.payments.length / result.elapsedS;
    const inWindow = arrivals.filter((a) => a.at >= result.startedAt && a.at <= loadEndedAt).length;
    const deliveredPerS = inWindow / ((loadEndedAt - result.startedAt) / 1000);
    const machineCores = (machine1.busy - machine0.busy) / result.elapsedS;
    const cpuPerPayment = (1000 * serverCpu) / Math.max(1, result.payments.length);
    const met = arrivals.length === result.payments.length && commitToArrival.p99 < TARGET_P99_MS;

    const lines = [
      `Webhooks: ${RATE} payments/s requested for ${result.elapsedS.toFixed(1)} s (create order + simulate_transfer), endpoint on order.paid, events through ${EVENTS === 'nats' ? 'NATS JetStream' : 'Postgres (no NATS)'}`,
      `  payments/s         ${paymentsPerS.toFixed(0)}  (${result.payments.length} paid, ${result.errors.length} errors${result.errors[0] ? `, e.g. ${result.errors[0]}` : ''}${result.behind ? `, ${result.behind} not started: ${MAX_IN_FLIGHT} in flight` : ''})`,
      `  delivered/s        ${deliveredPerS.toFixed(0)} during the load; ${arrivals.length} of ${result.payments.length} order.paid delivered, the last ${lastArrival - loadEndedAt} ms after the load ended; ${receiver.duplicates()} duplicates`,
      `  commit -> arrival  ${fmt(commitToArrival)} ms   (order.paid "created" to the receiver)`,
      `  answer -> arrival  ${fmt(answerToArrival)} ms   (simulate_transfer response to the receiver)`,
      `  stages (p50/p99)   commit->published ${fmt(summary(stages.published))} | published->queued ${fmt(summary(stages.queued))} | queued->answered ${fmt(summary(stages.attempted))}`,
      `  API latency ms     create ${fmt(createMs)} | simulate_transfer ${fmt(transferMs)}`,
      `  CPU (cores)        server ${(serverCpu / result.elapsedS).toFixed(2)}, load generator + receiver ${((clientCpuUs.user + clientCpuUs.system) / 1e6 / result.elapsedS).toFixed(2)}, whole machine ${machineCores.toFixed(2)} of ${cpus().length}`,
      `  CPU per payment    ${cpuPerPayment.toFixed(2)} ms of server${dispatcher ? ' + dispatcher' : ''} CPU per paid and delivered payment (aim <= ${TARGET_CPU_MS} ms: ${cpuPerPayment <= TARGET_CPU_MS ? 'met' : 'MISSED'})`,
      `  target p99 < ${TARGET_P99_MS} ms (commit -> arrival), every event delivered: ${met ? 'met' : 'MISSED'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `${JSON.stringify({
        seconds: SECONDS,
        rate: RATE,
        events: EVENTS,
        payments_per_s: Math.round(paymentsPerS),
        payments: result.payments.length,
        errors: result.errors.length,
        delivered: arrivals.length,
        delivered_per_s: Math.round(deliveredPerS),
        duplicates: receiver.duplicates(),
        p50_ms: Math.round(commitToArrival.p50),
        p99_ms: Math.round(commitToArrival.p99),
        max_ms: Math.round(commitToArrival.max),
        answer_p50_ms: Math.round(answerToArrival.p50),
        answer_p99_ms: Math.round(answerToArrival.p99),
        server_cpu_cores: +(serverCpu / result.elapsedS).toFixed(2),
        server_cpu_ms_per_payment: +cpuPerPayment.toFixed(2),
        dispatcher_apart: DISPATCHER_APART,
        machine_cpu_cores: +machineCores.toFixed(2),
        target_met: met,
      })}\n`,
    );
    if (!met) process.exitCode = 1;
  } finally {
    agent.destroy();
    if (server) await stopServer(server).catch((err) => log(`stopping server: ${err}`));
    if (dispatcher) await stopServer(dispatcher).catch((err) => log(`stopping the dispatcher: ${err}`));
    await receiver.close();
    await removeBenchState({ admin, dbName, dbUrl, dbCreated, natsStream });
  }
}

main().catch((err: unknown) => {
  log(`failed: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
