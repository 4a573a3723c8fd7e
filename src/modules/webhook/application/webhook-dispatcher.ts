import { webhookBody } from '../domain/webhook-body.ts';
import { retryDelayMs, type RetryPolicy } from '../domain/retry-schedule.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { Consumption, EventSubscription, ReceivedEvent, Settlement } from '../../event/ports/event-subscription.port.ts';
import type { ClaimedDelivery, WebhookDeliveryQueue } from '../ports/webhook-delivery-queue.port.ts';
import type { WebhookSender } from '../ports/webhook-sender.port.ts';
import type { Metrics } from '../../../kernel/ports/metrics.port.ts';
import { SIGNATURE_HEADER, signatureHeader } from './signature.ts';
import type { SigningSecrets } from './signing-secrets.ts';

/** Options of {@link createWebhookDispatcher}. */
export interface WebhookDispatcherOptions {
  readonly subscription: EventSubscription;
  readonly queue: WebhookDeliveryQueue;
  readonly sender: WebhookSender;
  /** Opens the endpoints' sealed signing secrets (kept opened in memory by secret id: no unsealing per delivery). */
  readonly secrets: Pick<SigningSecrets, 'open'>;
  readonly clock: Clock;
  readonly policy: RetryPolicy;
  /** Deliveries in flight at once, over all endpoints. */
  readonly concurrency: number;
  /** Deliveries in flight at once to one endpoint, so one slow endpoint cannot take every slot. */
  readonly perEndpoint: number;
  /** Deliveries in flight at once to one merchant's endpoints, so one merchant's slow endpoints cannot starve the others. */
  readonly perMerchant: number;
  readonly timeoutMs: number;
  /** How long a taken delivery stays ours; after it, another dispatcher may take it (a crash never loses it). */
  readonly leaseMs: number;
  /** Longest sleep when nothing is due (a new event wakes the loop at once). */
  readonly pollMs: number;
  readonly random?: () => number;
  /** This installation's id: an event published by another installation is never handled here. */
  readonly installationId: string;
  /** An event not in this installation's events table is handed over again after this delay… */
  readonly unknownEventRetryMs: number;
  /** …until it has been handed over this many times; then it is rejected. */
  readonly unknownEventDeliveries: number;
  /** A fault of ours (retried), with the delivery it happened to when there is one. */
  readonly onError: (err: unknown, about?: EventContext) => void;
  /** Told of every event the dispatcher could not account for (an operator should see these). */
  readonly onUnaccounted: (report: UnaccountedEvent) => void;
  /** Told of every delivery attempt once it is recorded (for the log). */
  readonly onAttempt?: (report: DeliveryAttemptReport) => void;
  /** Told of every send aborted by stop(), with whether its lease was given back (else it runs out: see leaseMs). */
  readonly onAbandoned?: (about: DeliveryContext, released: boolean) => void;
  /** Where each attempt is counted: lag from the event's commit, failures by endpoint. */
  readonly metrics?: Pick<Metrics, 'webhookAttempt'>;
}

/** Which event, and delivery of it when there is one, a log line is about: never its URL or body. */
export interface EventContext {
  readonly eventId: string;
  readonly endpointId?: string;
  readonly deliveryId?: string;
  /** This attempt's number, 1 for the first. */
  readonly attempt?: number;
}

/** A delivery attempt's context. */
export interface DeliveryContext extends EventContext {
  readonly endpointId: string;
  readonly deliveryId: string;
  readonly attempt: number;
}

/** One delivery attempt, recorded. */
export interface DeliveryAttemptReport extends DeliveryContext {
  readonly succeeded: boolean;
  readonly statusCode: number | null;
  /** Why no answer came (timeout, refused address, network), when none did. */
  readonly error: string | null;
  readonly durationMs: number;
  /** When the next attempt is due; null when this one ends the delivery. */
  readonly nextAttemptAt: Date | null;
}

/**
 * An event the dispatcher did not acknowledge as handled: published by
 * another installation (`foreign`), or not in this installation's events
 * table (`unknown`). `settled` says whether it will be handed over again
 * (`retry`) or never again (`rejected`).
 */
export interface UnaccountedEvent {
  readonly reason: 'foreign' | 'unknown';
  readonly settled: 'retry' | 'rejected';
  readonly eventId: string;
  readonly installationId: string | undefined;
  readonly deliveryCount: number;
  /** A sentence for the log that says what happened and what to change. */
  readonly message: string;
}

/** The webhook dispatcher: JetStream in, Postgres queue, signed HTTP out. */
export interface WebhookDispatcher {
  start(): Promise<void>;
  /**
   * Stops taking events and claiming deliveries, and waits for the sends in
   * flight. Once `abandon` fires it stops waiting for the consumer and the
   * sender loop, aborts the sends still in flight and gives their leases
   * back (no attempt is recorded: the delivery is due again at once); it
   * resolves when those are given back. A lease that cannot be given back
   * (Postgres unreachable) runs out after leaseMs: no delivery is lost either way.
   */
  stop(abandon?: AbortSignal): Promise<void>;
  /** Deliveries settled since start (for benchmarks and tests). */
  readonly stats: { delivered: number; failedAttempts: number };
}

/**
 * Creates the dispatcher. Each event from the durable consumer is accounted
 * for before it is acknowledged: it must be this installation's and be in
 * its events table. Such an event is fanned out into one queued delivery per
 * subscribed endpoint (idempotent, then acked);
 * a sender loop leases due deliveries, signs and POSTs them, and records
 * each attempt with its retry time. A lease that is never settled (process
 * killed) falls due again, so a delivery can repeat but never vanish.
 */
export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const random = options.random ?? Math.random;
  const inflight = new Map<string, number>();
  const merchantInflight = new Map<string, number>();
  const running = new Set<Promise<void>>();
  const stats = { delivered: 0, failedAttempts: 0 };
  let total = 0;
  let active = false;
  let consumption: Consumption | undefined;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let pendingWake = false;
  // Aborts every send in flight, and every later one, once stop() is told to abandon them.
  const sending = new AbortController();

  const nudge = () => {
    pendingWake = true;
    wake?.();
  };

  /** Sends one delivery and records the attempt; answers whether it succeeded. */
  async function deliver(delivery: ClaimedDelivery): Promise<boolean> {
    const now = options.clock.now();
    const timestamp = Math.floor(now.getTime() / 1000);
    const response = await options.sender.send({
      url: delivery.url,
      body: delivery.body,
      livemode: delivery.livemode,
      timeoutMs: options.timeoutMs,
      signal: sending.signal,
      headers: {
        [SIGNATURE_HEADER]: signatureHeader(options.secrets.open(delivery.secrets, delivery.endpointId), timestamp, delivery.body),
        'Checkout-Event-Id': delivery.eventId,
        'User-Agent': 'HostedCheckout-Webhooks/1.0',
      },
    });
    if (response.aborted) {
      // Not an attempt: the endpoint is not to blame. Due again at once, for whichever dispatcher runs next.
      const released = await options.queue.release(delivery, options.clock.now());
      options.onAbandoned?.(contextOf(delivery), released);
      return false;
    }
    const attemptedAt = options.clock.now();
    const succeeded = response.statusCode !== null && response.statusCode >= 200 && response.statusCode < 300;
    let nextAttemptAt: Date | null = null;
    if (!succeeded) {
      const next = attemptedAt.getTime() + retryDelayMs(options.policy, delivery.attemptCount + 1, random());
      if (next - delivery.createdAt.getTime() <= options.policy.windowMs) nextAttemptAt = new Date(next);
    }
    await options.queue.recordAttempt(delivery, {
      attemptedAt,
      statusCode: response.statusCode,
      error: response.error,
      durationMs: response.durationMs,
      responseExcerpt: response.excerpt,
      succeeded,
      nextAttemptAt,
      disableIfFailingSince: new Date(attemptedAt.getTime() - options.policy.windowMs),
    });
    if (succeeded) stats.delivered += 1;
    else stats.failedAttempts += 1;
    options.metrics?.webhookAttempt({
      endpointId: delivery.endpointId,
      succeeded,
      statusCode: response.statusCode,
      attemptCount: delivery.attemptCount,
      lagMs: delivery.eventCreatedAt ? attemptedAt.getTime() - delivery.eventCreatedAt.getTime() : undefined,
    });
    options.onAttempt?.({
      ...contextOf(delivery),
      succeeded,
      statusCode: response.statusCode,
      error: response.error,
      durationMs: response.durationMs,
      nextAttemptAt,
    });
    return succeeded;
  }

  const contextOf = (delivery: ClaimedDelivery): DeliveryContext => ({
    eventId: delivery.eventId,
    endpointId: delivery.endpointId,
    deliveryId: delivery.id,
    attempt: delivery.attemptCount + 1,
  });

  const count = (map: Map<string, number>, key: string, by: number) => {
    const n = (map.get(key) ?? 0) + by;
    if (n <= 0) map.delete(key);
    else map.set(key, n);
  };

  function launch(delivery: ClaimedDelivery): void {
    total += 1;
    count(inflight, delivery.endpointId, 1);
    count(merchantInflight, delivery.merchantId, 1);
    const task = deliver(delivery)
      .catch((err: unknown) => {
        options.onError(err, contextOf(delivery)); // the lease expires and the delivery falls due again
        return false;
      })
      .then((succeeded) => {
        // The sender loop needs waking only when this settling can change what it would claim or when:
        // a slot of a capped endpoint, merchant or the whole dispatcher freed, or a retry now due at a
        // time the loop has not seen. A success under every cap frees nothing the last claim left behind.
        const capped =
          total >= options.concurrency ||
          (inflight.get(delivery.endpointId) ?? 0) >= options.perEndpoint ||
          (merchantInflight.get(delivery.merchantId) ?? 0) >= options.perMerchant;
        total -= 1;
        count(inflight, delivery.endpointId, -1);
        count(merchantInflight, delivery.merchantId, -1);
        running.delete(task);
        if (capped || !succeeded) nudge();
      });
    running.add(task);
  }

  async function sleep(ms: number): Promise<void> {
    if (pendingWake) {
      pendingWake = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wake = undefined;
    pendingWake = false;
  }

  async function settle({ event, installationId, deliveryCount }: ReceivedEvent): Promise<Settlement> {
    if (installationId !== undefined && installationId !== options.installationId) {
      // It can never become ours, so a nak would bring it back for ever. Terminating takes it off this
      // consumer only; the message stays in the stream, and the log says what to change.
      options.onUnaccounted({
        reason: 'foreign',
        settled: 'rejected',
        eventId: event.id,
        installationId,
        deliveryCount,
        message:
          `Event ${event.id} was published by installation ${installationId}, not by this one (${options.installationId}): two installations share this ` +
          'JetStream stream. It was not delivered here. Give each installation its own NATS_STREAM and NATS_SUBJECT_PREFIX.',
      });
      return { kind: 'reject' };
    }
    const { known, queued } = await options.queue.enqueue(event, webhookBody(event), options.clock.now());
    if (known) {
      if (queued > 0) nudge();
      return { kind: 'handled' };
    }
    // Not in our events table (the relay publishes only committed rows, so this is an event of an earlier
    // version's neighbour on a shared stream, a hand-made message, or a database restored to before it).
    // A few retries leave room for a row that is late; then it is rejected rather than retried for ever.
    const last = deliveryCount >= options.unknownEventDeliveries;
    options.onUnaccounted({
      reason: 'unknown',
      settled: last ? 'rejected' : 'retry',
      eventId: event.id,
      installationId,
      deliveryCount,
      message:
        `Event ${event.id} (${event.type}, merchant ${event.merchantId}) is not in this installation's events table (delivery ${deliveryCount} of ${options.unknownEventDeliveries}); ` +
        (last
          ? 'it was not delivered and will not be retried. If another installation publishes to this stream, give each its own NATS_STREAM and NATS_SUBJECT_PREFIX.'
          : `it was not delivered and is retried in ${options.unknownEventRetryMs} ms.`),
    });
    return last ? { kind: 'reject' } : { kind: 'retry', delayMs: options.unknownEventRetryMs };
  }

  const busyEndpoints = () => [...inflight].filter(([, n]) => n >= options.perEndpoint).map(([id]) => id);
  const busyMerchants = () => [...merchantInflight].filter(([, n]) => n >= options.perMerchant).map(([id]) => id);

  async function senderLoop(): Promise<void> {
    let failures = 0;
    while (active) {
      try {
        const limit = options.concurrency - total;
        const claimed = await options.queue.claimDue({
          limit,
          perEndpoint: options.perEndpoint,
          excludeEndpoints: busyEndpoints(),
          inFlight: Object.fromEntries(inflight),
          perMerchant: options.perMerchant,
          merchantInFlight: Object.fromEntries(merchantInflight),
          excludeMerchants: busyMerchants(),
          leaseMs: options.leaseMs,
          now: options.clock.now(),
        });
        failures = 0;
        for (const delivery of claimed) launch(delivery);
        // Fewer than asked for: everything claimable was claimed (caps included), so claiming again at
        // once would find nothing; an enqueue or a freed capped slot wakes the loop.
        if (claimed.length < limit || total >= options.concurrency) {
          // A busy endpoint's or merchant's due deliveries do not count: one settling wakes the loop (nudge).
          const due = total >= options.concurrency ? undefined : await options.queue.nextDueAt(busyEndpoints(), busyMerchants());
          const untilDue = due ? Math.max(0, due.getTime() - options.clock.now().getTime()) : options.pollMs;
          await sleep(Math.min(options.pollMs, untilDue));
        }
      } catch (err) {
        failures += 1;
        options.onError(err);
        await sleep(Math.min(5000, 100 * 2 ** Math.min(failures, 6)));
      }
    }
  }

  return {
    stats,
    async start() {
      if (active) return;
      active = true;
      loop = senderLoop();
      consumption = await options.subscription.consume(async (received) => {
        try {
          return await settle(received);
        } catch (err) {
          // As the subscription would on its own (retried in a second), but reported with the event's id.
          options.onError(err, { eventId: received.event.id });
          return { kind: 'retry', delayMs: 1000 };
        }
      }, (err) => options.onError(err));
    },
    async stop(abandon) {
      active = false;
      const abandoned = new Promise<void>((resolve) => {
        if (!abandon) return;
        const onAbandon = () => {
          sending.abort();
          resolve();
        };
        if (abandon.aborted) onAbandon();
        else abandon.addEventListener('abort', onAbandon, { once: true });
      });
      // Events in hand are queued and acked, or (abandoned) left unacked for JetStream to hand over again.
      await Promise.race([consumption?.stop(), abandoned]);
      nudge();
      await Promise.race([loop, abandoned]);
      await Promise.allSettled([...running]);
    },
  };
}
