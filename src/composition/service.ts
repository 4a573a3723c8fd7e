import { ServiceUnavailableError } from '../ports/shared/errors.ts';
import type { Knex } from 'knex';
import type { FastifyInstance } from 'fastify';
import type { Config, ConnectedConfig } from '../config.ts';
import { readInstallationId } from '../adapters/postgres/postgres-installation.ts';
import { NatsEventFeed } from '../adapters/nats/jetstream-event-subscription.ts';
import { PostgresDependencyProbe } from '../adapters/postgres/postgres-dependency-probe.ts';
import { PostgresMigrationsProbe } from '../adapters/postgres/postgres-migrations-probe.ts';
import { NatsDependencyProbe } from '../adapters/nats/nats-dependency-probe.ts';
import { systemClock } from '../adapters/system/system-clock.ts';
import { createCheckReadiness } from '../application/health/check-readiness.ts';
import type { TestSandboxCredentials } from '../application/merchant/create-sandbox.ts';
import { ListenError, serveHttp } from '../../gateway/http-server.ts';
import { createCore, type Core } from './core.ts';
import { withGrpcTooling } from './grpc-tooling.ts';
import { linkEvents, type EventLink } from './events.ts';
import type { DestinationStream } from 'pino';
import type { PrometheusMetrics } from '../adapters/prometheus/prometheus-metrics.ts';
import { createObservability, serveMetricsPort, type MetricsListener } from './observability.ts';
import { openDatabase, StartupError } from './startup.ts';
import { chooseDatabase, connected, describeEvents, type ChosenDatabase } from './dependencies.ts';
import { startWorkers, type Worker } from './workers.ts';
import { loadKeyRing } from './vault-keys.ts';
import { needsEvents, WORKER_NAMES, type WorkerName } from './worker-names.ts';

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
  close(): Promise<void>;
}

/** Where a process writes its log lines (standard output unless a test captures them). */
export interface ProcessOptions {
  readonly logDestination?: DestinationStream;
}

/** How long start-up waits for NATS, so a stream of another installation stops the start rather than a running service. */
const NATS_START_WAIT_MS = 2000;

const PRIVATE_NETWORKS_WARNING = 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: webhooks may reach loopback and private addresses of this network. Use it for local development only.';

/** The workers `serve` runs beside the API: those SERVE_WORKERS names, without the dispatcher when RUN_DISPATCHER=false. */
export function servedWorkers(config: Pick<Config, 'serveWorkers' | 'runDispatcher'>): WorkerName[] {
  return config.serveWorkers.filter((name) => name !== 'dispatcher' || config.runDispatcher);
}

/**
 * Starts the service in this process: the API and the checkout on its port,
 * and the workers `serve` runs (all of them by default).
 * Without DATABASE_URL it starts or joins the embedded Postgres first, and releases it on close().
 * @throws StartupError when Postgres cannot be reached (or, without DATABASE_URL, the embedded one cannot be started),
 *   the port is taken, or the JetStream stream belongs to another installation (checked when NATS answers within 2 s).
 */
export async function startService(config: Config, options: ProcessOptions = {}): Promise<RunningService> {
  let knex: Knex | undefined;
  const { logger, log, metrics } = createObservability(config, 'serve', () => knex, options.logDestination);
  const database = await chooseDatabase(config, (line) => log.info(line));
  try {
    knex = await openDatabase(database.url, config.databasePoolMax, config.databaseNamedStatements);
  } catch (err) {
    await database.release();
    throw err;
  }
  try {
    return await serveOn(connected(config, database), database, knex, { logger, log, metrics });
  } catch (err) {
    await knex.destroy();
    await database.release();
    throw err;
  }
}

/** The rest of {@link startService}, on its chosen and migrated database (released by the caller if this throws). */
async function serveOn(config: ConnectedConfig, database: ChosenDatabase, knex: Knex, { logger, log, metrics }: ReturnType<typeof createObservability>): Promise<RunningService> {
  log.info(`Postgres: ${database.description}`);
  log.info(`Events: ${describeEvents(config)}`);
  const installationId = await readInstallationId(knex);
  // Seam of issue 20: where NATS_URL is absent, the outbox-backed event adapter takes JetStream's place (see describeEvents).
  const events = await linkEvents(config, installationId, 'checkout-relay', NATS_START_WAIT_MS, log);
  // Read before anything is served; its warning (a development key generated) is logged once the logger exists.
  const vaultWarnings: string[] = [];
  let keyRing;
  try {
    keyRing = loadKeyRing(config, { warn: (line) => vaultWarnings.push(line) });
  } catch (err) {
    await events.close();
    throw new StartupError(`The card vault's keys cannot be loaded: ${(err as Error).message}`);
  }
  const core = createCore({
    knex,
    keyRing,
    apiBaseUrl: config.publicUrl,
    checkoutHost: config.checkoutUrl,
    onInternalError: (err, requestId) => log.error(`${faultName(err)}${requestId ? ` (request ${requestId})` : ''}`, err),
    metrics,
    eventFeed: new NatsEventFeed(() => events.current(), config.natsSubjectPrefix, installationId),
    webhookAllowPrivateNetworks: config.webhookAllowPrivateNetworks,
    velocity: config.cardVelocity,
    rateLimit: config.rateLimit,
    payoutCutoffMinutesUtc: config.payoutCutoffMinutesUtc,
  });
  const firstSandbox = await core.createFirstSandbox({ name: 'Default sandbox', settlementCurrency: 'EUR' });

  // Postgres must answer, at this build's schema, for the service to be ready; NATS is reported, since orders are
  // accepted while it is down (the gRPC health service marks EventService, which streams from NATS, by it too).
  const readiness = createCheckReadiness({
    required: [new PostgresDependencyProbe(config.databaseUrl, 2000), new PostgresMigrationsProbe(config.databaseUrl, 2000)],
    informational: [new NatsDependencyProbe(() => events.current())],
    clock: systemClock,
    timeoutMs: 2000,
    cacheMs: 1000,
  });
  let http;
  try {
    const routes = withGrpcTooling(core.routes, { readiness, reflection: config.grpcReflection });
    http = await serveHttp(config, routes, readiness, () => undefined, {
      loggerInstance: logger,
      metrics: metrics && { http: metrics, exposition: metrics, token: config.metrics.token },
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
  const workers = startWorkers(servedWorkers(config), { config, knex, installationId, events, payments: core.payments, refunds: core.refunds, payoutRuns: core.payoutRuns, disputes: core.disputes, captures: core.captures, billing: core.billing, log, metrics });
  log.info(`Checkout service listening on ${config.host}:${http.port} (API ${config.publicUrl}, checkout ${config.checkoutUrl})`);
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
    async close() {
      await metricsListener?.close();
      await http.close();
      await stopAll(workers);
      await events?.close();
      await knex.destroy();
      await database.release();
    },
  };
}

async function stopAll(workers: readonly Worker[]): Promise<void> {
  await Promise.all(workers.map((worker) => worker.stop()));
}

/**
 * Runs some workers in a process of their own (`checkout worker --only …`,
 * `checkout dispatch`): no API, no port. Waits for NATS as long as it takes
 * when a worker needs it, since it has nothing to do without it; resolves
 * once every worker is at work.
 * Without DATABASE_URL it joins (or starts) the embedded Postgres, and releases it on close().
 * @throws StartupError when Postgres cannot be reached (or the embedded one started) or the JetStream stream belongs to another installation.
 */
export async function startWorkerProcess(config: Config, names: readonly WorkerName[], options: ProcessOptions = {}): Promise<{ readonly metricsListener: MetricsListener | undefined; close(): Promise<void> }> {
  let knex: Knex | undefined;
  const observability = createObservability(config, 'worker', () => knex, options.logDestination);
  const database = await chooseDatabase(config, (line) => observability.log.info(line));
  try {
    knex = await openDatabase(database.url, Math.min(10, config.databasePoolMax), config.databaseNamedStatements);
  } catch (err) {
    await database.release();
    throw err;
  }
  try {
    return await workOn(connected(config, database), database, knex, names, observability);
  } catch (err) {
    await knex.destroy();
    await database.release();
    throw err;
  }
}

/** The rest of {@link startWorkerProcess}, on its chosen and migrated database (released by the caller if this throws). */
async function workOn(config: ConnectedConfig, database: ChosenDatabase, knex: Knex, names: readonly WorkerName[], { log, metrics }: ReturnType<typeof createObservability>): Promise<{ readonly metricsListener: MetricsListener | undefined; close(): Promise<void> }> {
  log.info(`Postgres: ${database.description}`);
  const installationId = await readInstallationId(knex);
  let events: EventLink | undefined;
  // Nothing to do without NATS for these: wait for it as long as it takes. (Seam of issue 20, as in serveOn.)
  if (names.some(needsEvents)) {
    log.info(`Events: ${describeEvents(config)}`);
    events = await linkEvents(config, installationId, `checkout-${names.join('-')}`, Number.POSITIVE_INFINITY, log);
  }
  const core = createCore({
    knex,
    keyRing: loadKeyRing(config, log),
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
  const workers = startWorkers(names, { config, knex, installationId, events, payments: core.payments, refunds: core.refunds, payoutRuns: core.payoutRuns, disputes: core.disputes, captures: core.captures, billing: core.billing, log, metrics });
  await Promise.all(workers.map((worker) => worker.started));
  if (config.webhookAllowPrivateNetworks && names.includes('dispatcher')) log.warn(PRIVATE_NETWORKS_WARNING);
  log.info(`Workers running: ${names.join(', ')} (of ${WORKER_NAMES.join(', ')})`);
  return {
    metricsListener,
    async close() {
      await metricsListener?.close();
      await stopAll(workers);
      await events?.close();
      await knex.destroy();
      await database.release();
    },
  };
}
