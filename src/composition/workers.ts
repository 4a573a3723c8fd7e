import { PostgresCardVault } from '../modules/customer/adapters/postgres/postgres-card-vault.ts';
import type { Billing } from '../modules/subscription/application/bill-subscriptions.ts';
import type { TestClockAdvances } from '../modules/subscription/application/advance-test-clocks.ts';
import type { CaptureOrder } from '../modules/capture/application/capture-order.ts';
import type { RefundOrder } from '../modules/refund/application/refund-order.ts';
import type { PayoutRuns } from '../modules/payout/application/run-payouts.ts';
import type { SweepDisputes } from '../modules/dispute/application/sweep-disputes.ts';
import type { Knex } from 'knex';
import type { Config, ConnectedConfig } from './config.ts';
import { createDatabase } from '../kernel/adapters/postgres/database.ts';
import { purgeExpiredIdempotencyKeys } from '../kernel/adapters/postgres/postgres-idempotency-store.ts';
import { purgeIdleRateLimitBuckets } from '../modules/merchant/adapters/postgres/postgres-rate-limiter.ts';
import { purgeEndedAuthFailureWindows } from '../modules/merchant/adapters/postgres/postgres-auth-failure-limiter.ts';
import { PostgresWebhookDeliveryQueue } from '../modules/webhook/adapters/postgres/postgres-webhook-delivery-queue.ts';
import { NodeHttpWebhookSender } from '../modules/webhook/adapters/http/node-http-webhook-sender.ts';
import { createAddressPolicy } from '../modules/webhook/adapters/http/address-policy.ts';
import { systemClock } from '../kernel/adapters/node/system-clock.ts';
import { createOutboxRelay } from '../modules/event/application/relay-outbox.ts';
import {
  createWebhookDispatcher,
  type DeliveryAttemptReport,
  type EventContext,
  type UnaccountedEvent,
  type WebhookDispatcher,
} from '../modules/webhook/application/webhook-dispatcher.ts';
import type { Metrics } from '../kernel/ports/metrics.port.ts';
import type { KeyRing } from '../kernel/ports/key-ring.port.ts';
import type { EventSubscription } from '../modules/event/ports/event-subscription.port.ts';
import { createSigningSecrets } from '../modules/webhook/application/signing-secrets.ts';
import { RETRY_WINDOW_MS } from '../modules/webhook/domain/retry-schedule.ts';
import type { Payments } from '../modules/payment/application/payments.ts';
import type { EventTransport } from './events.ts';
import type { Log, LogFields } from './log.ts';
import { unlessAbandoned } from './shutdown.ts';
import type { WorkerName } from './worker-names.ts';

/** A started worker. */
export interface Worker {
  readonly name: WorkerName;
  /** Resolves once the worker is at work (with NATS, the relay and the dispatcher wait for it). */
  readonly started: Promise<void>;
  /**
   * Stops it and waits for the work in hand; once `abandon` fires (the
   * process's shutdown grace is nearly spent) it aborts what can be aborted
   * (webhook sends, whose leases it gives back) and stops waiting.
   */
  stop(abandon: AbortSignal): Promise<void>;
}

/** What the workers of a process share. */
export interface WorkerContext {
  readonly config: ConnectedConfig;
  readonly knex: Knex;
  readonly installationId: string;
  /** The events' transport (NATS JetStream, or the event stream in Postgres); the relay and the dispatcher need it, the others do not. */
  readonly events: EventTransport | undefined;
  readonly payments: Pick<Payments, 'expireDue' | 'recoverAttempts' | 'releaseAuthorizations'>;
  readonly refunds: Pick<RefundOrder, 'settleStale'>;
  readonly payoutRuns: PayoutRuns;
  readonly disputes?: { readonly sweep: SweepDisputes };
  readonly captures?: Pick<CaptureOrder, 'completeStale'>;
  readonly billing?: Pick<Billing, 'runDue'>;
  /** Test clocks advancing, stepped by the biller. */
  readonly testClocks?: Pick<TestClockAdvances, 'step'>;
  readonly log: Log;
  /** Where the relay and the dispatcher count; nothing is counted when absent. */
  readonly metrics?: Metrics;
  /** The vault's keys, which seal the webhook signing secrets the dispatcher signs with. */
  readonly keyRing: KeyRing;
}

/** Logs an event the dispatcher could not account for: at error level when it is given up, at warn while it is retried. */
export function logUnaccounted(report: UnaccountedEvent, log: Pick<Log, 'error' | 'warn'>): void {
  const fields = { event_id: report.eventId, reason: report.reason, delivery_count: report.deliveryCount };
  if (report.settled === 'rejected') log.error(`webhook dispatcher: ${report.message}`, undefined, fields);
  else log.warn(`webhook dispatcher: ${report.message}`, undefined, fields);
}

/** The fields that name an event and its delivery on a log line. */
function eventFields(about: EventContext | undefined): LogFields {
  if (!about) return {};
  return { event_id: about.eventId, endpoint_id: about.endpointId, delivery_id: about.deliveryId, attempt: about.attempt };
}

/**
 * Logs a delivery attempt: a failed one at info (the receiver's fault, retried
 * on schedule: an operator asked about a merchant's missing webhooks reads
 * these), one that gives up at warn, a success at debug.
 */
export function logAttempt(report: DeliveryAttemptReport, log: Log): void {
  if (report.succeeded) {
    if (log.debugEnabled()) log.debug('webhook delivered', { ...eventFields(report), status_code: report.statusCode, duration_ms: report.durationMs });
    return;
  }
  const fields = { ...eventFields(report), status_code: report.statusCode, error: report.error, duration_ms: report.durationMs, next_attempt_at: report.nextAttemptAt?.toISOString() ?? null };
  if (report.nextAttemptAt) log.info('webhook delivery attempt failed; retried later', fields);
  else log.warn('webhook delivery failed; no further attempt', undefined, fields);
}

/** Where the dispatcher reports faults (retried) and events it could not account for; tests may shorten the retries of unknown events. */
export interface DispatcherReports {
  readonly onError: (err: unknown, about?: EventContext) => void;
  readonly onUnaccounted: (report: UnaccountedEvent) => void;
  readonly onAttempt?: (report: DeliveryAttemptReport) => void;
  readonly onAbandoned?: (about: EventContext, released: boolean) => void;
  readonly metrics?: Metrics;
  readonly unknownEventRetryMs?: number;
  readonly unknownEventDeliveries?: number;
}

/** The durable consumer name of the webhook dispatcher, on JetStream and in Postgres alike. */
export const DISPATCHER_DURABLE = 'webhook-dispatcher';

/**
 * Builds the webhook dispatcher of this installation over its subscription (the durable consumer "webhook-dispatcher").
 * It opens each signing secret once and keeps it in memory by the secret's id (createSigningSecrets).
 */
export function createDispatcher(knex: Knex, subscription: EventSubscription, config: Config, installationId: string, keyRing: KeyRing, reports: DispatcherReports): WebhookDispatcher {
  return createWebhookDispatcher({
    subscription,
    queue: new PostgresWebhookDeliveryQueue(knex),
    sender: new NodeHttpWebhookSender(createAddressPolicy({ allowPrivateNetworks: config.webhookAllowPrivateNetworks })),
    secrets: createSigningSecrets(keyRing),
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
    onAttempt: reports.onAttempt,
    onAbandoned: reports.onAbandoned,
    metrics: reports.metrics,
  });
}

/** A worker that runs `tick` every `everyMs`, one tick at a time. */
function periodic(name: WorkerName, everyMs: number, tick: () => Promise<unknown>): Worker {
  let running = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    running = tick().finally(() => {
      busy = false;
    }) as Promise<void>;
  }, everyMs);
  timer.unref();
  return {
    name,
    started: Promise.resolve(),
    async stop(abandon) {
      clearInterval(timer);
      await unlessAbandoned(running, abandon);
    },
  };
}

/** One worker made of several, started together and stopped together. */
function together(name: WorkerName, parts: readonly Worker[]): Worker {
  return {
    name,
    started: Promise.all(parts.map((part) => part.started)).then(() => undefined),
    async stop(abandon) {
      await Promise.all(parts.map((part) => part.stop(abandon)));
    },
  };
}

/**
 * Starts the relay: with NATS it publishes once NATS answers and the stream is ours (until then events wait in
 * the outbox); without, it appends committed events to the event stream in Postgres, from the start.
 */
function startRelay(ctx: WorkerContext, events: EventTransport): Worker {
  let stopped = false;
  let relay: ReturnType<typeof createOutboxRelay> | undefined;
  const started = events.ready.then((channels) => {
    if (!channels || stopped) return;
    relay = createOutboxRelay({
      ...channels.relay(ctx.knex),
      batchSize: 256,
      idleMs: 20,
      maxBackoffMs: 5000,
      onError: (err, batch) => ctx.log.warn('outbox relay: publish failed; will retry', err, batch.length ? { event_id: batch[0]!.id, event_ids: batch.map((e) => e.id) } : {}),
      onPublished: (batch) => {
        if (ctx.log.debugEnabled()) ctx.log.debug('outbox relay: published', { event_id: batch[0]!.id, event_ids: batch.map((e) => e.id) });
      },
      metrics: ctx.metrics,
      clock: systemClock,
    });
    relay.start();
    ctx.log.info(`Publishing events of installation ${ctx.installationId} to ${events.description}`);
  });
  return {
    name: 'relay',
    started,
    async stop(abandon) {
      stopped = true;
      // A batch in hand is published and marked, or rolled back and left in the outbox for the next relay.
      await unlessAbandoned(relay?.stop(), abandon);
    },
  };
}

/** Starts the dispatcher on a pool of its own, so webhook fan-out never queues behind API requests for a connection. */
function startDispatcher(ctx: WorkerContext, events: EventTransport): Worker {
  let stopped = false;
  let dispatcher: WebhookDispatcher | undefined;
  let knex: Knex | undefined;
  const started = events.ready.then(async (channels) => {
    if (!channels || stopped) return;
    knex = createDatabase({ url: ctx.config.databaseUrl, poolMax: Math.min(10, ctx.config.databasePoolMax), namedStatements: ctx.config.databaseNamedStatements });
    dispatcher = createDispatcher(knex, channels.subscription(knex, DISPATCHER_DURABLE), ctx.config, ctx.installationId, ctx.keyRing, {
      onError: (err, about) => ctx.log.warn(about?.endpointId ? 'webhook dispatcher: delivery failed on our side; its lease will expire and it is retried' : 'webhook dispatcher', err, eventFields(about)),
      onUnaccounted: (report) => logUnaccounted(report, ctx.log),
      onAttempt: (report) => logAttempt(report, ctx.log),
      onAbandoned: (about, released) =>
        ctx.log.warn(
          released
            ? 'webhook delivery aborted: the shutdown grace ran out mid-send; no attempt recorded, due again at once'
            : `webhook delivery aborted: the shutdown grace ran out mid-send; no attempt recorded, due again when its lease runs out (WEBHOOK_LEASE_MS=${ctx.config.webhookLeaseMs})`,
          undefined,
          eventFields(about),
        ),
      metrics: ctx.metrics,
    });
    await dispatcher.start();
    ctx.log.info(`Dispatching webhooks of installation ${ctx.installationId} from ${events.description}`);
  });
  return {
    name: 'dispatcher',
    started,
    async stop(abandon) {
      stopped = true;
      // Still waiting for NATS: the link gives up connecting first (EventLink.windDown), so this ends.
      await unlessAbandoned(started, abandon);
      // Once abandon fires, sends in flight are aborted and give their leases back on this pool: the rest of the
      // grace is theirs (the service stops waiting when the grace ends).
      await dispatcher?.stop(abandon);
      await knex?.destroy();
    },
  };
}

/**
 * Starts the named workers of this process.
 * Orders past their time become expired (with order.expired) even when nobody opens their checkout,
 * attempts a crashed process left behind are settled (a capture nobody recorded is reversed), and
 * authorizations of manual orders not captured within 7 days are released (order.voided).
 */
export function startWorkers(names: readonly WorkerName[], ctx: WorkerContext): Worker[] {
  const events = () => {
    if (!ctx.events) throw new Error('the relay and the dispatcher need the events\' transport');
    return ctx.events;
  };
  return names.map((name): Worker => {
    switch (name) {
      case 'relay':
        return startRelay(ctx, events());
      case 'dispatcher':
        return startDispatcher(ctx, events());
      case 'sweeper':
        return periodic('sweeper', 5000, () =>
          Promise.all([
            ctx.payments.expireDue(500).catch((err: unknown) => ctx.log.warn('order expiry sweep failed', err)),
            ctx.payments.recoverAttempts(100).catch((err: unknown) => ctx.log.warn('payment recovery sweep failed', err)),
            ctx.payments.releaseAuthorizations(100).catch((err: unknown) => ctx.log.warn('authorization release sweep failed', err)),
            ctx.refunds.settleStale(100).catch((err: unknown) => ctx.log.warn('pending refund sweep failed', err)),
            ctx.disputes?.sweep(100).catch((err: unknown) => ctx.log.warn('dispute sweep failed', err)),
            ctx.captures?.completeStale(100).catch((err: unknown) => ctx.log.warn('capture sweep failed', err)),
          ]),
        );
      case 'settler':
        return periodic('settler', 60_000, () => ctx.payoutRuns.scheduled().catch((err: unknown) => ctx.log.warn('settlement or payout run failed', err)));
      case 'biller':
        return together('biller', [
          periodic('biller', 10_000, () => (ctx.billing ? ctx.billing.runDue(500) : Promise.resolve(0)).catch((err: unknown) => ctx.log.warn('subscription billing failed', err))),
          // Test clocks advance in bounded steps, every second: an advance is ready within seconds, and no step runs long.
          periodic('biller', 1000, () => (ctx.testClocks ? ctx.testClocks.step() : Promise.resolve(0)).catch((err: unknown) => ctx.log.warn('test clock advance failed', err))),
        ]);
      case 'janitor':
        return periodic('janitor', 10 * 60_000, () =>
          Promise.all([
            purgeExpiredIdempotencyKeys(ctx.knex).catch((err: unknown) => ctx.log.warn('idempotency key purge failed', err)),
            purgeIdleRateLimitBuckets(ctx.knex).catch((err: unknown) => ctx.log.warn('rate-limit bucket purge failed', err)),
            purgeEndedAuthFailureWindows(ctx.knex).catch((err: unknown) => ctx.log.warn('failed-authentication count purge failed', err)),
            // Expired card tokens hold a sealed CVC until deleted: gone within ten minutes of expiring.
            new PostgresCardVault(ctx.knex).deleteExpiredTokens(new Date(), 100_000).catch((err: unknown) => ctx.log.warn('card token purge failed', err)),
          ]),
        );
    }
  });
}
