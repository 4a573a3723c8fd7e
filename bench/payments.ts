// Card payments end to end against a real server process (its own database and JetStream stream):
// each payment is POST /v1/orders with the secret key, then CheckoutService.SubmitCardPayment over
// Connect with the publishable key and the order's client secret, paying with the sandbox's
// approved test card, the way an app or the embedded fields pay. The same clients first run an
// orders-only phase, so the ratio payments / orders is measured in one run on one machine state.
// After the load, the bench waits until every order.paid event has left the outbox for JetStream.
//
//   npm run bench:payments
//   BENCH_SECONDS=20 BENCH_CONCURRENCY=50 npm run bench:payments
//
// Environment (all optional):
//   BENCH_SECONDS           measured seconds of each phase (default 15)
//   BENCH_ORDERS_SECONDS    seconds of the orders-only phase (default BENCH_SECONDS; 0 skips it)
//   BENCH_CONCURRENCY       concurrent clients (default 50)
//   BENCH_WARMUP_SECONDS    unmeasured payments before the measured phases (default 3)
//   BENCH_POSTGRES_URL      server to create the bench database on (default postgres://postgres@127.0.0.1:5432)
//   BENCH_SERVER_POSTGRES_URL  where the server under test reaches that database, e.g. through PgBouncer (default the same)
//   NATS_URL                (default nats://127.0.0.1:4222)
//   BENCH_SERVER_NODE_ARGS  node flags of the server (default "--max-semi-space-size=8", as npm start)
//   BENCH_SERVER_ENV        extra server environment, e.g. "SERVE_WORKERS=none"
//   BENCH_KEEP_DB=1         do not drop the database at the end
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '../src/kernel/adapters/postgres/database.ts';
import { orderBody } from '../test/support/order-fixtures.ts';
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

const SECONDS = envInt('BENCH_SECONDS', 15);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 50);
const ORDERS_SECONDS = envInt('BENCH_ORDERS_SECONDS', SECONDS);
const WARMUP_SECONDS = envInt('BENCH_WARMUP_SECONDS', 3);

interface PrintedSandbox {
  merchant_id: string;
  test_secret_key: string;
  test_publishable_key: string;
  test_cards: { behaviour: string; number: string }[];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });

function post(port: number, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Phase {
  readonly ok: number;
  readonly errors: number;
  readonly firstError?: string;
  readonly latencies: number[];
  readonly elapsedS: number;
}

/** `clients` loops doing `one()` until `seconds` have passed. */
async function closedLoop(clients: number, seconds: number, one: () => Promise<void>): Promise<Phase> {
  const latencies: number[] = [];
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await one();
          ok += 1;
          latencies.push(performance.now() - t0);
        } catch (err) {
          errors += 1;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  return { ok, errors, firstError, latencies, elapsedS: (performance.now() - start) / 1000 };
}

async function main(): Promise<void> {
  const id = randomBytes(5).toString('hex');
  const dbName = `checkout_bench_${id}`;
  const dbUrl = `${POSTGRES_URL}/${dbName}`;
  const natsStream = `BENCH_PAYMENTS_${id}`;
  const admin = createDatabase({ url: `${POSTGRES_URL}/postgres`, poolMax: 1 });
  let server: Server | undefined;
  let dbCreated = false;
  try {
    await admin.raw('CREATE DATABASE ??', [dbName]);
    dbCreated = true;
    const port = await freePort();
    log(`database ${dbName}, server on 127.0.0.1:${port}, stream ${natsStream}; ${CONCURRENCY} clients, ${WARMUP_SECONDS}s warm-up + ${SECONDS}s orders + ${SECONDS}s payments`);
    server = await startServer({
      DATABASE_URL: serverDatabaseUrl(dbName),
      PORT: String(port),
      HOST: '127.0.0.1',
      NATS_URL,
      NATS_STREAM: natsStream,
      NATS_SUBJECT_PREFIX: `bench.${id}`,
      LOG_LEVEL: 'warn',
      // One key and one client address pay at full speed: the rate limit and the card-testing limits would measure themselves.
      RATE_LIMIT_PER_SECOND: '0',
      CARD_VELOCITY_PER_ADDRESS: '0',
      CARD_VELOCITY_PER_MERCHANT: '0',
      ...SERVER_ENV,
    });
    await waitHealthy(port, server.exited);
    const sandbox = server.sandbox as unknown as PrintedSandbox;
    const card = sandbox.test_cards.find((c) => c.behaviour === 'approved');
    if (!card) throw new Error('the sandbox printed no approved test card');
    const secret = { authorization: `Bearer ${sandbox.test_secret_key}` };
    let counter = 0;

    const createOrder = async (prefix: string): Promise<{ id: string; client_secret: string }> => {
      const res = await post(port, '/v1/orders', { ...secret, 'idempotency-key': `${prefix}${(counter++).toString(36)}` }, JSON.stringify(orderBody({ reference: `PAY-${counter}` })));
      if (res.status !== 201 && res.status !== 200) throw new Error(`create answered ${res.status}: ${res.text.slice(0, 200)}`);
      return JSON.parse(res.text) as { id: string; client_secret: string };
    };
    const pay = async (prefix: string): Promise<void> => {
      const order = await createOrder(prefix);
      const body = JSON.stringify({
        checkoutId: order.id.slice('ord_'.length),
        submissionId: randomUUID(),
        card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 3, cvc: '123', name: 'Bench' },
      });
      const res = await post(
        port,
        '/checkout.v1.CheckoutService/SubmitCardPayment',
        { authorization: `Bearer ${sandbox.test_publishable_key}`, 'checkout-client-secret': order.client_secret },
        body,
      );
      if (res.status !== 200) throw new Error(`SubmitCardPayment answered ${res.status}: ${res.text.slice(0, 200)}`);
      const outcome = (JSON.parse(res.text) as { outcome?: { status?: string; declineCode?: string } }).outcome;
      if (outcome?.status !== 'PAYMENT_STATUS_SUCCEEDED') throw new Error(`payment not succeeded: ${JSON.stringify(outcome)}`);
    };

    if (WARMUP_SECONDS > 0) {
      const warm = await closedLoop(CONCURRENCY, WARMUP_SECONDS, () => pay(`warm-${id}-`));
      log(`warm-up: ${warm.ok} payments, ${warm.errors} errors${warm.firstError ? ` (first: ${warm.firstError})` : ''}`);
    }

    const measure = async (name: string, one: () => Promise<void>, seconds = SECONDS) => {
      const cpu0 = await cpuSecondsOf(server!.pid);
      const machine0 = await machineCpu();
      const phase = await closedLoop(CONCURRENCY, seconds, one);
      const cpu = (await cpuSecondsOf(server!.pid)) - cpu0;
      const machine1 = await machineCpu();
      const sorted = Float64Array.from(phase.latencies).sort();
      const perS = phase.ok / phase.elapsedS;
      const machineCores = (machine1.busy - machine0.busy) / phase.elapsedS;
      console.log(`${name}  ${CONCURRENCY} clients, ${phase.elapsedS.toFixed(1)} s`);
      console.log(`  per second      ${perS.toFixed(0)}  (${phase.ok} done, ${phase.errors} errors${phase.firstError ? `; first: ${phase.firstError}` : ''})`);
      console.log(`  latency ms      p50 ${percentile(sorted, 50).toFixed(1)}  p95 ${percentile(sorted, 95).toFixed(1)}  p99 ${percentile(sorted, 99).toFixed(1)}`);
      console.log(`  server CPU      ${((cpu / Math.max(phase.ok, 1)) * 1000).toFixed(2)} ms each, ${(cpu / phase.elapsedS).toFixed(2)} cores; whole machine ${machineCores.toFixed(2)} cores`);
      return { perS, p99: percentile(sorted, 99), cpuMs: (cpu / Math.max(phase.ok, 1)) * 1000, errors: phase.errors };
    };

    const orders =
      ORDERS_SECONDS > 0
        ? await measure('POST /v1/orders', async () => void (await createOrder(`ord-${id}-`)), ORDERS_SECONDS)
        : { perS: Number.NaN, p99: Number.NaN, cpuMs: Number.NaN, errors: 0 };
    const payments = await measure('payments (create + SubmitCardPayment, approved card)', () => pay(`pay-${id}-`));

    // End to end: every order.paid event reaches JetStream (the relay marks it published).
    const knex = createDatabase({ url: dbUrl, poolMax: 1 });
    let paidEvents = 0;
    let unpublished = 0;
    let drainS = 0;
    try {
      const t0 = performance.now();
      const deadline = t0 + 120_000;
      for (;;) {
        const rows = (await knex.raw(
          "SELECT count(*) FILTER (WHERE type = 'order.paid')::int AS paid, count(*) FILTER (WHERE published_at IS NULL)::int AS unpublished FROM events",
        )) as { rows: { paid: number; unpublished: number }[] };
        paidEvents = rows.rows[0]!.paid;
        unpublished = rows.rows[0]!.unpublished;
        if (unpublished === 0 || performance.now() > deadline) break;
        await sleep(100);
      }
      drainS = (performance.now() - t0) / 1000;
    } finally {
      await knex.destroy();
    }
    await stopServer(server);
    console.log(`events           ${paidEvents} order.paid; outbox ${unpublished === 0 ? `drained ${drainS.toFixed(1)} s after the load` : `NOT drained: ${unpublished} unpublished after 120 s`}`);
    console.log(`payments / orders ${((100 * payments.perS) / orders.perS).toFixed(1)}%`);
    console.log(
      JSON.stringify({
        seconds: SECONDS,
        concurrency: CONCURRENCY,
        orders_per_s: Math.round(orders.perS),
        payments_per_s: Math.round(payments.perS),
        ratio: Number((payments.perS / orders.perS).toFixed(3)),
        payment_p99_ms: Number(payments.p99.toFixed(1)),
        server_cpu_ms_per_order: Number(orders.cpuMs.toFixed(3)),
        server_cpu_ms_per_payment: Number(payments.cpuMs.toFixed(3)),
        paid_events: paidEvents,
        unpublished,
      }),
    );
  } finally {
    agent.destroy();
    if (server) await stopServer(server);
    await removeBenchState({ admin, dbName, dbUrl, dbCreated, natsStream });
    await admin.destroy();
  }
}

await main();
