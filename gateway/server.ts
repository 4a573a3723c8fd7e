import { readFileSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import type { Knex } from 'knex';
import type { NatsConnection } from 'nats';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../src/config.ts';
import { createCore, type Core } from '../src/core.ts';
import { createDatabase, migrateLatest } from '../src/adapters/postgres/database.ts';
import { purgeExpiredIdempotencyKeys } from '../src/adapters/postgres/postgres-idempotency-store.ts';
import { PostgresOutboxReader } from '../src/adapters/postgres/postgres-event-outbox.ts';
import { purgeIdleRateLimitBuckets } from '../src/adapters/postgres/postgres-rate-limiter.ts';
import { connectNats, ensureStream, StreamConflictError, type StreamOptions, type StreamOwnership } from '../src/adapters/nats/jetstream.ts';
import { readInstallationId } from '../src/adapters/postgres/postgres-installation.ts';
import { JetStreamEventPublisher } from '../src/adapters/nats/jetstream-event-publisher.ts';
import { createOutboxRelay, type OutboxRelay } from '../src/application/relay-outbox.ts';
import { createWebhookDispatcher, type UnaccountedEvent, type WebhookDispatcher } from '../src/application/webhooks/webhook-dispatcher.ts';
import { JetStreamEventSubscription, NatsEventFeed } from '../src/adapters/nats/jetstream-event-subscription.ts';
import { NodeHttpWebhookSender } from '../src/adapters/http/node-http-webhook-sender.ts';
import { createAddressPolicy } from '../src/adapters/http/address-policy.ts';
import { PostgresWebhookDeliveryQueue } from '../src/adapters/postgres/postgres-webhook-delivery-queue.ts';
import { RETRY_WINDOW_MS } from '../src/domain/webhook/retry-schedule.ts';
import { systemClock } from '../src/adapters/system/system-clock.ts';
import { createCheckReadiness } from '../src/application/check-readiness.ts';
import { PostgresDependencyProbe } from '../src/adapters/postgres/postgres-dependency-probe.ts';
import { NatsDependencyProbe } from '../src/adapters/nats/nats-dependency-probe.ts';
import type { TestSandboxCredentials } from '../src/application/create-sandbox.ts';
import { buildGateway } from './app.ts';
import { listenH1AndH2c } from './listen.ts';

/** A running service: gateway, outbox relay and housekeeping. */
export interface RunningService {
  readonly app: FastifyInstance;
  readonly core: Core;
  readonly knex: Knex;
  readonly port: number;
  /** Test-mode credentials of the sandbox created on first start, if this start created one. */
  readonly firstSandbox: TestSandboxCredentials | undefined;
  close(): Promise<void>;
}

/** Failure to start, with a message for the operator. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Hides the password of a connection URL in messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * Creates the database named in the URL when it does not exist yet, so that
 * `npm start` (and `checkout migrate`, `checkout sandbox create`) work on a fresh Postgres.
 * @throws StartupError when Postgres cannot be reached or the database cannot be created.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const probe = createDatabase({ url, poolMax: 1 });
  try {
    await probe.raw('select 1');
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') {
      throw new StartupError(`Cannot reach Postgres at ${redactUrl(url)}: ${(err as Error).message}. Start Postgres or set DATABASE_URL.`);
    }
  } finally {
    await probe.destroy();
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  target.pathname = '/postgres';
  const admin = createDatabase({ url: target.toString(), poolMax: 1 });
  try {
    await admin.raw('CREATE DATABASE ??', [name]);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') {
      throw new StartupError(`Database "${name}" does not exist and could not be created: ${(err as Error).message}`);
    }
  } finally {
    await admin.destroy();
  }
}

/** The stream options of this installation, from the configuration and the installation id in its database. */
export function streamOptions(config: Config, installationId: string): StreamOptions {
  return { stream: config.natsStream, subjectPrefix: config.natsSubjectPrefix, duplicateWindowMs: 10 * 60_000, installationId };
}

/** How long start-up waits for NATS, so a stream of another installation stops the start rather than a running service. */
const NATS_START_WAIT_MS = 2000;

/**
 * Starts the whole service in this process.
 * @throws StartupError when Postgres cannot be reached, the port is taken, or
 *   the JetStream stream belongs to another installation (checked when NATS answers within 2 s).
 */
export async function startService(config: Config): Promise<RunningService> {
  await ensureDatabase(config.databaseUrl);
  const knex = createDatabase({ url: config.databaseUrl, poolMax: config.databasePoolMax });
  await migrateLatest(knex);
  const installationId = await readInstallationId(knex);
  const stream = streamOptions(config, installationId);

  // NATS is not needed to accept orders, so start-up waits for it only briefly; when it answers in time,
  // a stream of another installation refuses the start here, before anything is written or served.
  let closed = false;
  let nc: NatsConnection | undefined;
  let streamChecked: Promise<StreamOwnership> | undefined;
  const natsConnection = connectNats(config.natsUrl, 'checkout-relay');
  let waitTimer: NodeJS.Timeout | undefined;
  const early = await Promise.race([
    // A connection that fails outright (not merely late) is reported by the event setup below.
    natsConnection.catch(() => undefined),
    new Promise<undefined>((resolve) => {
      waitTimer = setTimeout(() => resolve(undefined), NATS_START_WAIT_MS);
    }),
  ]);
  clearTimeout(waitTimer);
  if (early) {
    nc = early;
    streamChecked = ensureStream(nc, stream);
    try {
      await streamChecked;
    } catch (err) {
      if (err instanceof StreamConflictError) {
        await nc.close().catch(() => undefined);
        await knex.destroy();
        throw new StartupError(`${err.message} (NATS ${config.natsUrl})`);
      }
      // Any other failure is reported by the event setup below, as when NATS comes late.
    }
  }

  // The core reports internal errors to the gateway's logger, which exists only once the gateway is built.
  const logRef: { app?: FastifyInstance } = {};
  const core = createCore({
    knex,
    apiBaseUrl: config.publicUrl,
    checkoutHost: config.checkoutUrl,
    onInternalError: (err) => logRef.app?.log.error({ err }, 'internal error'),
    eventFeed: new NatsEventFeed(() => nc, config.natsSubjectPrefix, installationId),
    webhookAllowPrivateNetworks: config.webhookAllowPrivateNetworks,
    velocity: config.cardVelocity,
    rateLimit: config.rateLimit,
  });
  const firstSandbox = await core.createFirstSandbox({ name: 'Default sandbox', settlementCurrency: 'EUR' });

  // Postgres must answer for the service to be ready; NATS is reported, since orders are accepted while it is down.
  const readiness = createCheckReadiness({
    required: [new PostgresDependencyProbe(config.databaseUrl, 2000)],
    informational: [new NatsDependencyProbe(() => nc)],
    clock: systemClock,
    timeoutMs: 2000,
    cacheMs: 1000,
  });
  // Aborted first on close: server streams (checkout listen) end, so their connections do not hold the shutdown.
  const shutdown = new AbortController();
  const app = await buildGateway({
    routes: core.routes,
    publicUrl: config.publicUrl,
    logger: { level: config.logLevel },
    trustProxy: config.trustProxy,
    readiness,
    shutdownSignal: shutdown.signal,
  });
  logRef.app = app;
  await app.ready();
  let server: Server;
  try {
    server = await listenH1AndH2c(
      app.server,
      core.routes,
      config.port,
      config.host,
      (err, where) => app.log.error({ err }, `Connect handler ${where} failed`),
      { limits: config.connectionLimits, trustProxy: config.trustProxy, shutdownSignal: shutdown.signal },
    );
  } catch (err) {
    closed = true;
    void natsConnection.then((c) => c.close()).catch(() => undefined);
    await knex.destroy();
    throw new StartupError(`Cannot listen on ${config.host}:${config.port}: ${(err as Error).message}. Set PORT to a free port.`);
  }
  const port = (server.address() as AddressInfo).port;
  const log = app.log;
  warnIfDescriptorsShort(config.connectionLimits.maxConnections, (line) => log.warn(line));
  let lastDropWarning = 0;
  server.on('drop', () => {
    // One line a minute at most: a flood of refused connections must not flood the log as well.
    if (Date.now() - lastDropWarning < 60_000) return;
    lastDropWarning = Date.now();
    log.warn(`Refusing new connections: MAX_CONNECTIONS (${config.connectionLimits.maxConnections}) are open.`);
  });

  // Events: the relay starts once NATS answers; until then orders are accepted and events wait in the outbox.
  let relay: OutboxRelay | undefined;
  let dispatcher: WebhookDispatcher | undefined;
  let dispatcherKnex: Knex | undefined;
  // Connects in the background (retrying for ever); `closed` stops a late connection from starting anything.
  void (async () => {
    if (!nc) {
      log.warn(`Cannot reach NATS at ${config.natsUrl}; orders are accepted and their events will be published when it is back.`);
      const late = await natsConnection;
      if (closed) return void (await late.close());
      nc = late;
    }
    let ownership: StreamOwnership;
    try {
      ownership = await (streamChecked ?? ensureStream(nc, stream));
    } catch (err) {
      if (!(err instanceof StreamConflictError)) throw err;
      // Too late to refuse the start: publish nothing to, and take nothing from, another installation's stream.
      log.error(`${err.message} Events of this installation stay in its database until it is restarted with names of its own.`);
      return;
    }
    if (closed) return;
    if (ownership === 'adopted') log.info(`JetStream stream ${config.natsStream} named no installation (an earlier version made it); it is now installation ${installationId}'s.`);
    relay = createOutboxRelay({
      reader: new PostgresOutboxReader(knex),
      publisher: new JetStreamEventPublisher(nc, stream),
      batchSize: 256,
      idleMs: 20,
      maxBackoffMs: 5000,
      onError: (err) => log.warn({ err }, 'outbox relay: publish failed; will retry'),
    });
    relay.start();
    log.info(`Publishing events of installation ${installationId} to JetStream stream ${config.natsStream} on ${config.natsUrl}`);
    if (config.runDispatcher) {
      // A pool of its own, so webhook fan-out never queues behind API requests for a connection.
      dispatcherKnex = createDatabase({ url: config.databaseUrl, poolMax: Math.min(10, config.databasePoolMax) });
      dispatcher = createDispatcher(dispatcherKnex, nc, config, installationId, {
        onError: (err) => log.warn({ err }, 'webhook dispatcher'),
        onUnaccounted: (report) => logUnaccounted(report, (line) => log.error(line), (line) => log.warn(line)),
      });
      await dispatcher.start();
    }
  })().catch((err) => log.error({ err }, 'NATS setup failed; events stay in the outbox'));

  // Orders past expires_at become expired (with order.expired) even when nobody opens their checkout, and
  // attempts a crashed process left behind are settled (a capture nobody recorded is reversed).
  let sweeping = false;
  const expiry = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    Promise.all([
      core.payments.expireDue(500).catch((err) => log.warn({ err }, 'order expiry sweep failed')),
      core.payments.recoverAttempts(100).catch((err) => log.warn({ err }, 'payment recovery sweep failed')),
    ]).finally(() => {
      sweeping = false;
    });
  }, 5000);
  expiry.unref();

  const purge = setInterval(() => {
    purgeExpiredIdempotencyKeys(knex).catch((err) => log.warn({ err }, 'idempotency key purge failed'));
    purgeIdleRateLimitBuckets(knex).catch((err) => log.warn({ err }, 'rate-limit bucket purge failed'));
  }, 10 * 60_000);
  purge.unref();

  log.info(`Checkout service listening on ${config.host}:${port} (API ${config.publicUrl}, checkout ${config.checkoutUrl})`);
  if (config.webhookAllowPrivateNetworks) log.warn(PRIVATE_NETWORKS_WARNING);

  return {
    app,
    core,
    knex,
    port,
    firstSandbox,
    async close() {
      closed = true;
      clearInterval(purge);
      clearInterval(expiry);
      shutdown.abort();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
      await relay?.stop();
      await dispatcher?.stop();
      await dispatcherKnex?.destroy();
      if (nc) await nc.drain().catch(() => undefined);
      await knex.destroy();
    },
  };
}

/** Descriptors kept free for what the process opens itself: Postgres pools, NATS, webhook deliveries, files. */
const DESCRIPTOR_RESERVE = 512;

/**
 * Warns when MAX_CONNECTIONS leaves too few file descriptors under the
 * process's limit (`ulimit -n`), where a flood of connections would starve
 * the Postgres pool (EMFILE). Linux only; elsewhere it says nothing.
 */
function warnIfDescriptorsShort(maxConnections: number, warn: (line: string) => void): void {
  let limit: number;
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    limit = Number(line?.split(/\s{2,}/)[1]);
  } catch {
    return;
  }
  if (Number.isFinite(limit) && maxConnections + DESCRIPTOR_RESERVE > limit) {
    warn(`MAX_CONNECTIONS (${maxConnections}) leaves fewer than ${DESCRIPTOR_RESERVE} of the ${limit} file descriptors this process may open (ulimit -n); lower MAX_CONNECTIONS or raise the limit.`);
  }
}

const PRIVATE_NETWORKS_WARNING = 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: webhooks may reach loopback and private addresses of this network. Use it for local development only.';

/** Logs an event the dispatcher could not account for: at error level when it is given up, at warn while it is retried. */
export function logUnaccounted(report: UnaccountedEvent, error: (line: string) => void, warn: (line: string) => void): void {
  (report.settled === 'rejected' ? error : warn)(`webhook dispatcher: ${report.message}`);
}

/** Where the dispatcher reports faults (retried) and events it could not account for; tests may shorten the retries of unknown events. */
export interface DispatcherReports {
  readonly onError: (err: unknown) => void;
  readonly onUnaccounted: (report: UnaccountedEvent) => void;
  readonly unknownEventRetryMs?: number;
  readonly unknownEventDeliveries?: number;
}

/** Builds the webhook dispatcher of this installation over the durable consumer "webhook-dispatcher". */
export function createDispatcher(knex: Knex, nc: NatsConnection, config: Config, installationId: string, reports: DispatcherReports): WebhookDispatcher {
  return createWebhookDispatcher({
    subscription: new JetStreamEventSubscription(nc, streamOptions(config, installationId), 'webhook-dispatcher'),
    queue: new PostgresWebhookDeliveryQueue(knex),
    sender: new NodeHttpWebhookSender(createAddressPolicy({ allowPrivateNetworks: config.webhookAllowPrivateNetworks })),
    clock: systemClock,
    policy: { baseMs: config.webhookRetryBaseMs, capMs: config.webhookRetryCapMs, windowMs: RETRY_WINDOW_MS },
    concurrency: config.webhookConcurrency.total,
    perEndpoint: config.webhookConcurrency.perEndpoint,
    perMerchant: config.webhookConcurrency.perMerchant,
    timeoutMs: config.webhookTimeoutMs,
    leaseMs: config.webhookLeaseMs,
    pollMs: 250,
    installationId,
    // An event missing from our table is retried for about a minute (a restore or failover may still bring
    // its row), then given up with an error in the log.
    unknownEventRetryMs: reports.unknownEventRetryMs ?? 10_000,
    unknownEventDeliveries: reports.unknownEventDeliveries ?? 6,
    onError: reports.onError,
    onUnaccounted: reports.onUnaccounted,
  });
}

/**
 * Runs only the webhook dispatcher (`checkout dispatch`), for deployments
 * that scale it apart from the gateway.
 * @throws StartupError when the JetStream stream belongs to another installation.
 */
export async function startDispatcherOnly(config: Config, log: (line: string) => void): Promise<{ close(): Promise<void> }> {
  await ensureDatabase(config.databaseUrl);
  const knex = createDatabase({ url: config.databaseUrl, poolMax: Math.min(10, config.databasePoolMax) });
  await migrateLatest(knex);
  const installationId = await readInstallationId(knex);
  const nc = await connectNats(config.natsUrl, 'checkout-dispatcher');
  let ownership: StreamOwnership;
  try {
    ownership = await ensureStream(nc, streamOptions(config, installationId));
  } catch (err) {
    await nc.close().catch(() => undefined);
    await knex.destroy();
    if (err instanceof StreamConflictError) throw new StartupError(`${err.message} (NATS ${config.natsUrl})`);
    throw err;
  }
  if (ownership === 'adopted') log(`JetStream stream ${config.natsStream} named no installation (an earlier version made it); it is now installation ${installationId}'s.`);
  const dispatcher = createDispatcher(knex, nc, config, installationId, {
    onError: (err) => log(`webhook dispatcher: ${(err as Error).message}`),
    onUnaccounted: (report) => logUnaccounted(report, log, log),
  });
  await dispatcher.start();
  if (config.webhookAllowPrivateNetworks) log(PRIVATE_NETWORKS_WARNING);
  log(`Dispatching webhooks of installation ${installationId} from JetStream stream ${config.natsStream}`);
  return {
    async close() {
      await dispatcher.stop();
      await nc.drain().catch(() => undefined);
      await knex.destroy();
    },
  };
}
