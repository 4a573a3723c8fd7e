import type { AddressInfo, Server } from 'node:net';
import type { Knex } from 'knex';
import type { NatsConnection } from 'nats';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../src/config.ts';
import { createCore, type Core } from '../src/core.ts';
import { createDatabase, migrateLatest } from '../src/adapters/postgres/database.ts';
import { purgeExpiredIdempotencyKeys } from '../src/adapters/postgres/postgres-idempotency-store.ts';
import { PostgresOutboxReader } from '../src/adapters/postgres/postgres-event-outbox.ts';
import { connectNats, ensureStream } from '../src/adapters/nats/jetstream.ts';
import { JetStreamEventPublisher } from '../src/adapters/nats/jetstream-event-publisher.ts';
import { createOutboxRelay, type OutboxRelay } from '../src/application/relay-outbox.ts';
import { createWebhookDispatcher, type WebhookDispatcher } from '../src/application/webhooks/webhook-dispatcher.ts';
import { JetStreamEventSubscription, NatsEventFeed } from '../src/adapters/nats/jetstream-event-subscription.ts';
import { NodeHttpWebhookSender } from '../src/adapters/http/node-http-webhook-sender.ts';
import { PostgresWebhookDeliveryQueue } from '../src/adapters/postgres/postgres-webhook-delivery-queue.ts';
import { RETRY_WINDOW_MS } from '../src/domain/webhook/retry-schedule.ts';
import { systemClock } from '../src/adapters/system/system-clock.ts';
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

/**
 * Starts the whole service in this process.
 * @throws StartupError when Postgres cannot be reached or the port is taken.
 */
export async function startService(config: Config): Promise<RunningService> {
  await ensureDatabase(config.databaseUrl);
  const knex = createDatabase({ url: config.databaseUrl, poolMax: config.databasePoolMax });
  await migrateLatest(knex);

  // The core reports internal errors to the gateway's logger, which exists only once the gateway is built.
  const logRef: { app?: FastifyInstance } = {};
  let nc: NatsConnection | undefined;
  const core = createCore({
    knex,
    apiBaseUrl: config.publicUrl,
    checkoutHost: config.checkoutUrl,
    onInternalError: (err) => logRef.app?.log.error({ err }, 'internal error'),
    eventFeed: new NatsEventFeed(() => nc, config.natsSubjectPrefix),
  });
  const firstSandbox = await core.createFirstSandbox({ name: 'Default sandbox', settlementCurrency: 'EUR' });

  const app = await buildGateway({ routes: core.routes, publicUrl: config.publicUrl, logger: { level: config.logLevel } });
  logRef.app = app;
  await app.ready();
  let server: Server;
  try {
    server = await listenH1AndH2c(app.server, core.routes, config.port, config.host);
  } catch (err) {
    await knex.destroy();
    throw new StartupError(`Cannot listen on ${config.host}:${config.port}: ${(err as Error).message}. Set PORT to a free port.`);
  }
  const port = (server.address() as AddressInfo).port;
  const log = app.log;

  // Events: the relay starts once NATS answers; until then orders are accepted and events wait in the outbox.
  let relay: OutboxRelay | undefined;
  let dispatcher: WebhookDispatcher | undefined;
  let dispatcherKnex: Knex | undefined;
  let closed = false;
  // Connects in the background (retrying for ever); `closed` stops a late connection from starting anything.
  void (async () => {
    const firstTry = connectNats(config.natsUrl, 'checkout-relay');
    const warn = setTimeout(
      () => log.warn(`Cannot reach NATS at ${config.natsUrl}; orders are accepted and their events will be published when it is back.`),
      2000,
    );
    nc = await firstTry.finally(() => clearTimeout(warn));
    if (closed) return void (await nc.close());
    const stream = { stream: config.natsStream, subjectPrefix: config.natsSubjectPrefix, duplicateWindowMs: 10 * 60_000 };
    await ensureStream(nc, stream);
    relay = createOutboxRelay({
      reader: new PostgresOutboxReader(knex),
      publisher: new JetStreamEventPublisher(nc, stream),
      batchSize: 256,
      idleMs: 20,
      maxBackoffMs: 5000,
      onError: (err) => log.warn({ err }, 'outbox relay: publish failed; will retry'),
    });
    relay.start();
    log.info(`Publishing events to JetStream stream ${config.natsStream} on ${config.natsUrl}`);
    if (config.runDispatcher) {
      // A pool of its own, so webhook fan-out never queues behind API requests for a connection.
      dispatcherKnex = createDatabase({ url: config.databaseUrl, poolMax: Math.min(10, config.databasePoolMax) });
      dispatcher = createDispatcher(dispatcherKnex, nc, config, (err) => log.warn({ err }, 'webhook dispatcher'));
      await dispatcher.start();
    }
  })().catch((err) => log.error({ err }, 'NATS setup failed; events stay in the outbox'));

  // Orders past expires_at become expired (with order.expired) even when nobody opens their checkout.
  const expiry = setInterval(() => {
    core.payments.expireDue(500).catch((err) => log.warn({ err }, 'order expiry sweep failed'));
  }, 5000);
  expiry.unref();

  const purge = setInterval(() => {
    purgeExpiredIdempotencyKeys(knex).catch((err) => log.warn({ err }, 'idempotency key purge failed'));
  }, 10 * 60_000);
  purge.unref();

  log.info(`Checkout service listening on ${config.host}:${port} (API ${config.publicUrl}, checkout ${config.checkoutUrl})`);

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

/** Builds the webhook dispatcher over the durable consumer "webhook-dispatcher". */
export function createDispatcher(knex: Knex, nc: NatsConnection, config: Config, onError: (err: unknown) => void): WebhookDispatcher {
  const stream = { stream: config.natsStream, subjectPrefix: config.natsSubjectPrefix, duplicateWindowMs: 10 * 60_000 };
  return createWebhookDispatcher({
    subscription: new JetStreamEventSubscription(nc, stream, 'webhook-dispatcher'),
    queue: new PostgresWebhookDeliveryQueue(knex),
    sender: new NodeHttpWebhookSender(),
    clock: systemClock,
    policy: { baseMs: config.webhookRetryBaseMs, capMs: config.webhookRetryCapMs, windowMs: RETRY_WINDOW_MS },
    concurrency: 128,
    perEndpoint: 8,
    timeoutMs: config.webhookTimeoutMs,
    leaseMs: config.webhookLeaseMs,
    pollMs: 250,
    onError,
  });
}

/**
 * Runs only the webhook dispatcher (`checkout dispatch`), for deployments
 * that scale it apart from the gateway.
 */
export async function startDispatcherOnly(config: Config, log: (line: string) => void): Promise<{ close(): Promise<void> }> {
  await ensureDatabase(config.databaseUrl);
  const knex = createDatabase({ url: config.databaseUrl, poolMax: Math.min(10, config.databasePoolMax) });
  await migrateLatest(knex);
  const nc = await connectNats(config.natsUrl, 'checkout-dispatcher');
  const stream = { stream: config.natsStream, subjectPrefix: config.natsSubjectPrefix, duplicateWindowMs: 10 * 60_000 };
  await ensureStream(nc, stream);
  const dispatcher = createDispatcher(knex, nc, config, (err) => log(`webhook dispatcher: ${(err as Error).message}`));
  await dispatcher.start();
  log(`Dispatching webhooks from JetStream stream ${config.natsStream}`);
  return {
    async close() {
      await dispatcher.stop();
      await nc.drain().catch(() => undefined);
      await knex.destroy();
    },
  };
}
