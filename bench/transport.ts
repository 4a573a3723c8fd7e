// Cost of one unary call through the REST gateway's in-process transport
// (gateway/in-process-transport.ts) and through connect's createRouterTransport,
// which encodes each message to bytes and runs the whole Connect protocol in memory.
//
//   npm run bench:transport
//   BENCH_CALLS=20000 BENCH_ROUNDS=5 npm run bench:transport
//
// Environment (all optional):
//   BENCH_CALLS          calls per transport, per call kind and round, against the core (default 3000; 10x for the trivial service)
//   BENCH_ROUNDS         rounds, the transports taking turns; the median round is reported (default 3)
//   BENCH_POSTGRES_URL   server to create the bench database on (default postgres://postgres@127.0.0.1:5432)
//
// Three call kinds, one call at a time, as the gateway makes them (createClient over the transport):
//   trivial GetOrder    a fake OrderService answering a fixed order: the transport alone
//   core GetOrder       the real core over a real database: authentication (key cached) and one read
//   core CreateOrder    the real core: one insert statement, with an Idempotency-Key as bench:orders sends
// wall is µs of elapsed time per call; cpu is µs of this process's CPU (user + system) per call.
// Also: how long after timeoutMs the in-process transport answers DeadlineExceeded for an implementation that
// waits on its signal (a figure gateway/in-process-transport.spec.ts asserted on until issue 21 moved timing here).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Code, ConnectError, createClient, createRouterTransport, type CallOptions, type ConnectRouter, type Transport } from '@connectrpc/connect';
import { createDatabase, migrateLatest } from '../src/kernel/adapters/postgres/database.ts';
import { createCore } from '../src/composition/core.ts';
import { OrderService, OrderStatus } from '../src/gen/checkout/v1/order_pb.ts';
import { createInProcessTransport } from '../gateway/in-process-transport.ts';
import { orderRequest } from '../test/support/order-fixtures.ts';
import { envInt, log, POSTGRES_URL } from './support.ts';

const CALLS = envInt('BENCH_CALLS', 3000);
const ROUNDS = Math.max(1, envInt('BENCH_ROUNDS', 3));

const TRANSPORTS: readonly [string, (routes: (router: ConnectRouter) => void) => Transport][] = [
  ['in-process', createInProcessTransport],
  ['router', (routes) => createRouterTransport(routes)],
];

/** A call of one kind over a given transport; `i` numbers the calls. */
type Call = (transport: Transport) => (i: number) => Promise<unknown>;

interface Figures {
  wallUs: number;
  cpuUs: number;
}

async function time(call: (i: number) => Promise<unknown>, calls: number): Promise<Figures> {
  for (let i = 0; i < Math.min(500, calls); i++) await call(-1 - i); // warm-up
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await call(i);
  const wallUs = ((performance.now() - t0) * 1000) / calls;
  const cpu = process.cpuUsage(cpu0);
  return { wallUs, cpuUs: (cpu.user + cpu.system) / calls };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs every transport for `rounds` rounds, taking turns, and answers each one's rounds. */
async function measure(kind: string, routes: (router: ConnectRouter) => void, call: Call, calls: number): Promise<Record<string, Figures[]>> {
  const runs: Record<string, Figures[]> = {};
  const calling = TRANSPORTS.map(([name, create]) => [name, call(create(routes))] as const);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, fn] of round % 2 === 0 ? calling : [...calling].reverse()) {
      const figures = await time(fn, calls);
      (runs[name] ??= []).push(figures);
      log(`${kind}, round ${round + 1}: ${name} wall ${figures.wallUs.toFixed(1)} µs, cpu ${figures.cpuUs.toFixed(1)} µs per call`);
    }
  }
  return runs;
}

/** Calls with timeoutMs 50 to an implementation that ends only when its signal aborts: ms until DeadlineExceeded. */
async function deadlineFigures(calls = 20, timeoutMs = 50): Promise<{ timeoutMs: number; medianMs: number; maxMs: number }> {
  const client = createClient(
    OrderService,
    createInProcessTransport((router) =>
      router.service(OrderService, { getOrder: (_request, context) => new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason))) }),
    ),
  );
  const took: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const code = await client.getOrder({ id: 'ord_slow' }, { timeoutMs }).then(
      () => 'answered',
      (err: unknown) => (err instanceof ConnectError ? err.code : 'other'),
    );
    if (code !== Code.DeadlineExceeded) throw new Error(`a call past its deadline ended with ${String(code)}, not DeadlineExceeded`);
    took.push(performance.now() - t0);
  }
  return { timeoutMs, medianMs: +median(took).toFixed(1), maxMs: +Math.max(...took).toFixed(1) };
}

function fakeRoutes(router: ConnectRouter): void {
  router.service(OrderService, {
    getOrder: (request) => ({ order: { id: request.id, reference: 'INV-1001', amount: 2500n, currency: 'EUR', status: OrderStatus.PENDING } }),
  });
}

async function main(): Promise<void> {
  const dbName = `checkout_bench_${randomBytes(5).toString('hex')}`;
  const admin = createDatabase({ url: `${POSTGRES_URL}/postgres`, poolMax: 1 });
  await admin.raw('CREATE DATABASE ??', [dbName]);
  const knex = createDatabase({ url: `${POSTGRES_URL}/${dbName}`, poolMax: 10 });
  const results: Record<string, Record<string, Figures[]>> = {};
  try {
    await migrateLatest(knex);
    const faults: unknown[] = [];
    const core = createCore({ knex, apiBaseUrl: 'http://api.bench', checkoutHost: 'http://pay.bench', onInternalError: (err) => faults.push(err) });
    const sandbox = (await core.createSandbox({ name: 'Transport bench', settlementCurrency: 'EUR' }))!;
    // The headers the REST gateway sends to the core with each call.
    const options = (extra: Record<string, string> = {}): CallOptions => ({ headers: { authorization: `Bearer ${sandbox.test_secret_key}`, 'request-id': 'req_bench', ...extra } });
    const seed = await createClient(OrderService, createInProcessTransport(core.routes)).createOrder(orderRequest(), options());
    const orderId = seed.order!.id;
    log(`database ${dbName}; ${CALLS} calls per round against the core, ${CALLS * 10} against the trivial service; ${ROUNDS} rounds`);

    results['trivial GetOrder'] = await measure('trivial GetOrder', fakeRoutes, (t) => {
      const client = createClient(OrderService, t);
      return () => client.getOrder({ id: 'ord_bench' });
    }, CALLS * 10);
    results['core GetOrder'] = await measure('core GetOrder', core.routes, (t) => {
      const client = createClient(OrderService, t);
      return () => client.getOrder({ id: orderId }, options());
    }, CALLS);
    const run = randomBytes(4).toString('hex');
    let transportNo = 0;
    results['core CreateOrder'] = await measure('core CreateOrder', core.routes, (t) => {
      const client = createClient(OrderService, t);
      const prefix = `bench-${run}-${transportNo++}`;
      let n = 0;
      return () => client.createOrder(orderRequest(), options({ 'idempotency-key': `${prefix}-${n++}` }));
    }, CALLS);
    if (faults.length > 0) throw new Error(`the core reported ${faults.length} internal errors, e.g. ${String(faults[0])}`);
  } finally {
    await knex.destroy();
    await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [dbName]).catch((err) => log(`dropping ${dbName}: ${err}`));
    await admin.destroy();
  }

  const [ours, theirs] = TRANSPORTS.map(([name]) => name) as [string, string];
  const cell = (f: Figures) => `wall ${f.wallUs.toFixed(1).padStart(6)}  cpu ${f.cpuUs.toFixed(1).padStart(6)}`;
  const lines = [`Unary call, µs per call (median of ${ROUNDS} rounds)`, `  ${''.padEnd(20)} ${ours.padEnd(26)} ${theirs.padEnd(26)} router − in-process (cpu)`];
  const json: Record<string, unknown> = { rounds: ROUNDS, calls: CALLS };
  const deadline = await deadlineFigures();
  json.deadline = { timeout_ms: deadline.timeoutMs, median_ms: deadline.medianMs, max_ms: deadline.maxMs };
  for (const [kind, runs] of Object.entries(results)) {
    const med = (name: string): Figures => ({ wallUs: median(runs[name]!.map((f) => f.wallUs)), cpuUs: median(runs[name]!.map((f) => f.cpuUs)) });
    const a = med(ours);
    const b = med(theirs);
    lines.push(`  ${kind.padEnd(20)} ${cell(a).padEnd(26)} ${cell(b).padEnd(26)} ${(b.cpuUs - a.cpuUs).toFixed(1)} µs`);
    json[kind] = Object.fromEntries(TRANSPORTS.map(([name]) => [name, runs[name]!.map((f) => ({ wall_us: +f.wallUs.toFixed(1), cpu_us: +f.cpuUs.toFixed(1) }))]));
  }
  lines.push(`Deadline: timeoutMs ${deadline.timeoutMs} answered DeadlineExceeded after ${deadline.medianMs} ms (median of 20 calls; at most ${deadline.maxMs} ms)`);
  process.stdout.write(`${lines.join('\n')}\n${JSON.stringify(json)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench/transport: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
