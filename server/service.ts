import { ServiceUnavailableError } from '../src/kernel/ports/errors.ts';
import type { Knex } from 'knex';
import type { FastifyInstance } from 'fastify';
import type { Config, ConnectedConfig } from '../src/composition/config.ts';
import { readInstallationId } from '../src/kernel/adapters/postgres/postgres-installation.ts';
import { PostgresDependencyProbe } from '../src/kernel/adapters/postgres/postgres-dependency-probe.ts';
import { PostgresMigrationsProbe } from '../src/kernel/adapters/postgres/postgres-migrations-probe.ts';
import { systemClock } from '../src/kernel/adapters/node/system-clock.ts';
import { createCheckReadiness } from '../src/kernel/application/check-readiness.ts';
import type { TestSandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { ListenError, serveHttp } from '../gateway/http-server.ts';
import type { GatewayServerOptions } from '../gateway/options.ts';
import { createCore, type Core } from '../src/composition/core.ts';
import { withGrpcTooling } from '../src/composition/grpc-tooling.ts';
import { linkEvents, type EventTransport } from '../src/composition/events.ts';
import type { Log } from '../src/composition/log.ts';
import { abortReserveMs, stopWithinGrace, type StopOutcome, type StopStep } from '../src/composition/shutdown.ts';
import type { DestinationStream } from 'pino';
import type { PrometheusMetrics } from '../src/kernel/adapters/prometheus/prometheus-metrics.ts';
import { createObservability, serveMetricsPort, type MetricsListener } from './observability.ts';
import { openDatabase, StartupError } from '../src/composition/startup.ts';
import { chooseDatabase, connected, type ChosenDatabase } from '../src/composition/dependencies.ts';
import { startWorkers } from '../src/composition/workers.ts';
import { loadKeyRing } from '../src/composition/vault-keys.ts';
import type { KeyRing } from '../src/kernel/ports/key-ring.port.ts';
import { needsEvents, WORKER_NAMES, type WorkerName } from '../src/composition/worker-names.ts';

/** A running service: the gateway and, unless configured otherwise, every worker. */
/** How a fault the core logs is named: an unreachable store is told apart from a bug of ours. */
const faultName = (err: unknown) => (err instanceof ServiceUnavailableError ? 'a store is unavailable' : 'internal error');

export interface RunningService {
  readonly app: FastifyInstance;
  readonly core: Core;
  readonly knex: Knex;
  readonly port: number;
  /** Test-mode credentials of the sandbox created on first start, if this start created one. */
  readonly firstSandbox: TestSandboxCredentials | undefined;
  /** The process's metrics (also at GET /metrics); undefined when METRICS=off. */
  readonly metrics: PrometheusMetrics | undefined;
  /** The METRICS_PORT listener, when one is configured. */
  readonly metricsListener: MetricsListener | undefined;
  /** Stops the service within the shutdown grace (see {@link StopOptions}); answers whether everything finished in it. */
  close(options?: StopOptions): Promise<StopOutcome>;
}

/** How a process is stopped. */
export interface StopOptions {
  /** How long the stop may take in all (SHUTDOWN_GRACE_MS unless given). */
  readonly graceMs?: number;
  /** What asked for it, for the log (e.g. SIGTERM). */
  readonly reason?: string;
}

/** A worker process (`checkout worker`, `checkout dispatch`). */
export interface RunningWorkers {
  readonly metricsListener: MetricsListener | undefined;
  /** Stops the workers within the shutdown grace (see {@link StopOptions}); answers whether everything finished in it. */
  close(options?: StopOptions): Promise<StopOutcome>;
}

/** Where a process is told to stop while it is still starting. */
export interface StartOptions extends ProcessOptions {
  /** Fired (SIGINT, SIGTERM) while a worker process waits for NATS: the start ends with StartCancelledError. */
  readonly stopSignal?: AbortSignal;
}

/** Where a process writes its log lines (standard output unless a test captures them). */
export interface ProcessOptions {
  readonly logDestination?: DestinationStream;
}

/** How long start-up waits for NATS (when NATS_URL is set), so a stream of another installation stops the start rather than a running service. */
const NATS_START_WAIT_MS = 2000;

const PRIVATE_NETWORKS_WARNING = 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: webhooks may reach loopback and private addresses of this network. Use it for local development only.';

/** What the gateway is handed to serve on its port, taken from the configuration (the gateway reads none of it itself). */
export function gatewayOptionsOf(config: Pick<Config, 'publicUrl' | 'logLevel' | 'trustProxy' | 'port' | 'host' | 'connectionLimits'>): GatewayServerOptions {
  return {
    publicUrl: config.publicUrl,
    logLevel: config.logLevel,
    trustProxy: config.trustProxy,
    port: config.port,
    host: config.host,
    connectionLimits: config.connectionLimits,
  };
}

/** The workers `serve` runs beside the API: those SERVE_WORKERS names, without the dispatcher when RUN_DISPATCHER=false. */
export function servedWorkers(config: Pick<Config, 'serveWorkers' | 'runDispatcher'>): WorkerName[] {
  return config.serveWorkers.filter((name) => name !== 'dispatcher' || config.runDispatcher);
}

/**
 * Starts the service in this process: the API and the checkout on its port,
 * and the workers `serve` runs (all of them by default).
 * Events travel through NATS JetStream when NATS_URL is set, otherwise
 * through the event stream in Postgres (one node); the start-up line says which.
 * Without DATABASE_URL it starts or joins the embedded Postgres first, and releases it on close().
 * @throws StartupError when Postgres cannot be reached (or, without DATABASE_URL, the embedded one cannot be started),
 *   the port is taken, or the JetStream stream belongs to another installation (checked when NATS answers within 2 s).
 */
export async function startService(config: Config, options: ProcessOptions = {}): Promise<RunningService> {
  // Read first: the migrations seal with them (025, the webhook signing secrets). Its warning (a
  // development key generated) is logged once the logger exists.
  const vaultWarnings: string[] = [];
  let keyRing;
  try {
    keyRing = loadKeyRing(config, { warn: (line) => vaultWarnings.push(line) });
  } catch (err) {
    throw new StartupError(`The card vault's keys cannot be loaded: ${(err as Error).message}`);
  }
  let knex: Knex | undefined;
  // The logger comes before the database, which it reports the choice of; the metrics read the database once it is open.
  const observability = createObservability(config, 'serve', () => knex, options.logDestination);
  const database = await chooseDatabase(config, (line) => observability.log.info(line));
  try {
    knex = await openDatabase(database.url, config.databasePoolMax, config.databaseNamedStatements, keyRing);
  } catch (err) {
    await database.release();
    throw err;
  }
  try {
    return await serveOn(connected(config, database), database, knex, keyRing, vaultWarnings, observability);
  } catch (err) {
    await knex.destroy();
    await database.release();
    throw err;
  }
}

/** The rest of {@link startService}, on its chosen and migrated database (the caller closes the pool and releases the database if this throws). */
async function serveOn(
  config: ConnectedConfig,
  database: ChosenDatabase,
  knex: Knex,
  keyRing: KeyRing,
  vaultWarnings: readonly string[],
  { logger, log, metrics }: ReturnType<typeof createObservability>,
): Promise<RunningService> {
  log.info(`Postgres: ${database.description}`);
  const installationId = await readInstallationId(knex);
  const events = await linkEvents(config, installationId, knex, 'checkout-relay', NATS_START_WAIT_MS, log);
  const core = createCore({
    knex,
    keyRing,
    apiBaseUrl: config.publicUrl,
    checkoutHost: config.checkoutUrl,
    onInternalError: (err, requestId) => log.error(`${faultName(err)}${requestId ? ` (request ${requestId})` : ''}`, err),
    metrics,
    eventFeed: events.feed,
    webhookAllowPrivateNetworks: config.webhookAllowPrivateNetworks,
    velocity: config.cardVelocity,
    rateLimit: config.rateLimit,
    authFailures: config.authFailures,
    payoutCutoffMinutesUtc: config.payoutCutoffMinutesUtc,
  });
  const firstSandbox = await core.createFirstSandbox({ name: 'Default sandbox', settlementCurrency: 'EUR' });

  // Postgres must answer, at this build's schema, for the service to be ready; the events (and NATS, when they
  // travel through it) are reported with their mode, since orders are accepted while NATS is down (the gRPC health
  // service marks EventService, whose ListenEvents streams them, by the events' check).
  const readiness = createCheckReadiness({
    required: [new PostgresDependencyProbe(config.databaseUrl, 2000), new PostgresMigrationsProbe(config.databaseUrl, 2000)],
    informational: events.probes,
    clock: systemClock,
    timeoutMs: 2000,
    cacheMs: 1000,
  });
  let http;
  try {
    const routes = withGrpcTooling(core.routes, { readiness, reflection: config.grpcReflection });
    http = await serveHttp(gatewayOptionsOf(config), routes, readiness, () => undefined, {
      loggerInstance: logger,
      metrics: metrics && { http: metrics, exposition: metrics, token: config.metrics.token },
      simulatedIssuer: core.simulatedIssuer,
    });
  } catch (err) {
    await events.close();
    throw err instanceof ListenError ? new StartupError(err.message) : err;
  }
  let metricsListener: MetricsListener | undefined;
  try {
    metricsListener = metrics && (await serveMetricsPort(config.metrics, metrics, log));
  } catch (err) {
    await http.close();
    await events.close();
    throw err;
  }
  const workers = startWorkers(servedWorkers(config), { config, knex, installationId, events, payments: core.payments, refunds: core.refunds, payoutRuns: core.payoutRuns, disputes: core.disputes, captures: core.captures, billing: core.billing, testClocks: core.testClocks, log, metrics, keyRing });
  log.info(`Checkout service listening on ${config.host}:${http.port} (API ${config.publicUrl}, checkout ${config.checkoutUrl}); ${events.summary}`);
  if (config.webhookAllowPrivateNetworks) log.warn(PRIVATE_NETWORKS_WARNING);
  for (const line of vaultWarnings) log.warn(line);

  return {
    app: http.app,
    core,
    knex,
    port: http.port,
    firstSandbox,
    metrics,
    metricsListener,
    close(options = {}) {
      // Still waiting for NATS, or NATS gone: the relay and the dispatcher stop at once rather than wait for it.
      events.windDown();
      return stopProcess(config, log, options, [
        [
          // New connections are refused at once; calls in flight finish, or are cut when the grace is nearly spent.
          { name: 'http (requests in flight)', stop: (abandon) => http.close(abandon) },
          ...(metricsListener ? [{ name: 'metrics listener', stop: () => metricsListener!.close() }] : []),
          ...workers.map((worker) => ({ name: worker.name, stop: (abandon: AbortSignal) => worker.stop(abandon) })),
        ],
        [{ name: eventsStepName(events), stop: (abandon) => events.close(abandon) }],
        [{ name: 'postgres pool', stop: () => knex.destroy() }],
        ...embeddedStage(database),
      ]);
    },
  };
}

/**
 * The last stage of a stop without DATABASE_URL: this process's lease on the embedded Postgres given up, and the
 * server stopped (pg_ctl stop -m fast) when no other process uses it. Nothing with DATABASE_URL.
 */
function embeddedStage(database: ChosenDatabase): StopStep[][] {
  return database.embedded ? [[{ name: 'embedded postgres', stop: () => database.release() }]] : [];
}

/** How a stop names the events' transport it closes after the workers: the NATS connection, or the LISTEN connection of the event stream in Postgres. */
function eventsStepName(events: EventTransport): string {
  return events.mode === 'nats' ? 'nats' : 'event stream (LISTEN connection)';
}

/**
 * Runs a process's stop within its grace (stopWithinGrace) and logs its
 * beginning and its end: a clean stop at info, one whose grace ran out at error.
 */
async function stopProcess(config: Config, log: Log, options: StopOptions, stages: readonly (readonly StopStep[])[]): Promise<StopOutcome> {
  const graceMs = options.graceMs ?? config.shutdownGraceMs;
  const started = performance.now();
  log.info(`Stopping${options.reason ? ` (${options.reason})` : ''}: no new work is taken; work in hand has up to ${graceMs - abortReserveMs(graceMs)} ms of the ${graceMs} ms grace (SHUTDOWN_GRACE_MS)`);
  const outcome = await stopWithinGrace(graceMs, stages, log);
  const ms = Math.round(performance.now() - started);
  if (outcome === 'clean') log.info(`Stopped in ${ms} ms`);
  else log.error(`Stopped in ${ms} ms, the grace exceeded: what was still in hand was abandoned (docs/operations.md#stopping)`);
  return outcome;
}

/**
 * Runs some workers in a process of their own (`checkout worker --only …`,
 * `checkout dispatch`): no API, no port. With NATS_URL set, waits for NATS
 * as long as it takes when a worker needs it, since it has nothing to do
 * without it; resolves once every worker is at work.
 * Without DATABASE_URL it joins (or starts) the embedded Postgres, and releases it on close().
 * @throws StartupError when Postgres cannot be reached (or the embedded one started) or the JetStream stream belongs to another installation.
 */
export async function startWorkerProcess(config: Config, names: readonly WorkerName[], options: StartOptions = {}): Promise<RunningWorkers> {
  // Read first: the migrations seal with them; a development key's warning is logged once the logger exists.
  const vaultWarnings: string[] = [];
  let keyRing;
  try {
    keyRing = loadKeyRing(config, { warn: (line) => vaultWarnings.push(line) });
  } catch (err) {
    throw new StartupError(`The card vault's keys cannot be loaded: ${(err as Error).message}`);
  }
  let knex: Knex | undefined;
  const observability = createObservability(config, 'worker', () => knex, options.logDestination);
  const database = await chooseDatabase(config, (line) => observability.log.info(line));
  try {
    knex = await openDatabase(database.url, Math.min(10, config.databasePoolMax), config.databaseNamedStatements, keyRing);
  } catch (err) {
    await database.release();
    throw err;
  }
  try {
    return await workOn(connected(config, database), database, knex, keyRing, vaultWarnings, names, options, observability);
  } catch (err) {
    await knex.destroy();
    await database.release();
    throw err;
  }
}

/** The rest of {@link startWorkerProcess}, on its chosen and migrated database (the caller closes the pool and releases the database if this throws). */
async function workOn(
  config: ConnectedConfig,
  database: ChosenDatabase,
  knex: Knex,
  keyRing: KeyRing,
  vaultWarnings: readonly string[],
  names: readonly WorkerName[],
  options: StartOptions,
  { log, metrics }: ReturnType<typeof createObservability>,
): Promise<RunningWorkers> {
  log.info(`Postgres: ${database.description}`);
  const installationId = await readInstallationId(knex);
  for (const line of vaultWarnings) log.warn(line);
  let events: EventTransport | undefined;
  // With NATS, nothing to do without it for these: wait for it as long as it takes.
  if (names.some(needsEvents)) events = await linkEvents(config, installationId, knex, `checkout-${names.join('-')}`, Number.POSITIVE_INFINITY, log, options.stopSignal);
  const core = createCore({
    knex,
    keyRing,
    apiBaseUrl: config.publicUrl,
    checkoutHost: config.checkoutUrl,
    onInternalError: (err, requestId) => log.error(`${faultName(err)}${requestId ? ` (request ${requestId})` : ''}`, err),
    velocity: config.cardVelocity,
    payoutCutoffMinutesUtc: config.payoutCutoffMinutesUtc,
    metrics,
  });
  let metricsListener: MetricsListener | undefined;
  try {
    metricsListener = metrics && (await serveMetricsPort(config.metrics, metrics, log));
  } catch (err) {
    await events?.close();
    throw err;
  }
  const workers = startWorkers(names, { config, knex, installationId, events, payments: core.payments, refunds: core.refunds, payoutRuns: core.payoutRuns, disputes: core.disputes, captures: core.captures, billing: core.billing, testClocks: core.testClocks, log, metrics, keyRing });
  await Promise.all(workers.map((worker) => worker.started));
  if (config.webhookAllowPrivateNetworks && names.includes('dispatcher')) log.warn(PRIVATE_NETWORKS_WARNING);
  log.info(`Workers running: ${names.join(', ')} (of ${WORKER_NAMES.join(', ')})`);
  return {
    metricsListener,
    close(options = {}) {
      events?.windDown();
      return stopProcess(config, log, options, [
        [
          ...(metricsListener ? [{ name: 'metrics listener', stop: () => metricsListener!.close() }] : []),
          ...workers.map((worker) => ({ name: worker.name, stop: (abandon: AbortSignal) => worker.stop(abandon) })),
        ],
        ...(events ? [[{ name: eventsStepName(events), stop: (abandon: AbortSignal) => events!.close(abandon) }]] : []),
        [{ name: 'postgres pool', stop: () => knex.destroy() }],
        ...embeddedStage(database),
      ]);
    },
  };
}
