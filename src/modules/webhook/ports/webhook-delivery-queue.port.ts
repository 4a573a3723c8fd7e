import type { DomainEvent } from '../../event/domain/domain-event.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import type { SigningSecretRecord } from './webhook-endpoint-repository.port.ts';

/** A delivery taken off the queue under a lease, with what sending it needs. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly eventId: string;
  readonly endpointId: string;
  /** The merchant the endpoint belongs to (deliveries in flight are capped per merchant too). */
  readonly merchantId: string;
  readonly url: string;
  readonly livemode: boolean;
  readonly body: string;
  /** Attempts made before this one. */
  readonly attemptCount: number;
  readonly createdAt: Date;
  /** When the event was committed (its created time); the delivery lag is measured from it. */
  readonly eventCreatedAt?: Date;
  /** Signing secrets as stored (sealed), newest first (more than one during a rotation overlap). */
  readonly secrets: readonly SigningSecretRecord[];
  /** When the lease ends: the delivery falls due again then, unless an attempt is recorded or it is released first. */
  readonly leaseUntil: Date;
}

/** What one HTTP attempt gave. */
export interface AttemptRecord {
  readonly attemptedAt: Date;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly responseExcerpt: string;
  readonly succeeded: boolean;
  /** When to try again; null when this attempt ends the delivery (success or give up). */
  readonly nextAttemptAt: Date | null;
  /** Disable the endpoint when it has failed continuously since before this time. */
  readonly disableIfFailingSince: Date;
}

/** One recorded attempt, for the deliveries log. */
export interface DeliveryAttemptView {
  readonly id: string;
  readonly eventId: string;
  readonly endpointId: string;
  readonly attemptedAt: Date;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly responseExcerpt: string;
}

/** The durable per-endpoint delivery queue. */
export interface WebhookDeliveryQueue {
  /**
   * Queues the event for every enabled endpoint of its merchant and mode
   * subscribed to its type; idempotent per event and endpoint. Queues nothing
   * unless the event is in this installation's events log (same id, merchant,
   * mode and type): known says whether it was, queued how many deliveries were added.
   */
  enqueue(event: DomainEvent, body: string, now: Date): Promise<{ known: boolean; queued: number }>;
  /**
   * Leases due deliveries: at most perEndpoint per endpoint counting the
   * deliveries already in flight to it (inFlight, by endpoint id), none of the
   * excluded endpoints; a lease not settled by leaseMs is claimable again.
   */
  claimDue(options: {
    limit: number;
    perEndpoint: number;
    excludeEndpoints: readonly string[];
    inFlight?: Readonly<Record<string, number>>;
    /** Most deliveries of one merchant in flight at once, with those already in flight per merchant. */
    perMerchant?: number;
    merchantInFlight?: Readonly<Record<string, number>>;
    excludeMerchants?: readonly string[];
    leaseMs: number;
    now: Date;
  }): Promise<ClaimedDelivery[]>;
  /** Records an attempt and its consequences (success, retry time, give up, endpoint health) in one transaction. */
  recordAttempt(delivery: ClaimedDelivery, attempt: AttemptRecord): Promise<void>;
  /**
   * Gives back a leased delivery with no attempt recorded (its send was aborted
   * because the dispatcher is stopping): it is due again at `now`. Answers
   * false when the lease was no longer this dispatcher's (it ran out and
   * another took the delivery, or the delivery was settled meanwhile).
   */
  release(delivery: ClaimedDelivery, now: Date): Promise<boolean>;
  /** Queues an event again (to one endpoint or every subscribed one) from now; answers how many. */
  requeueEvent(scope: Scope, eventId: string, endpointId: string | undefined, now: Date): Promise<number>;
  /** Queues every event of the scope created since a time for one endpoint; answers how many. */
  replaySince(scope: Scope, endpointId: string, since: Date, now: Date): Promise<number>;
  /** The attempts made for an event, oldest first. */
  listAttempts(scope: Scope, eventId: string): Promise<DeliveryAttemptView[]>;
  /**
   * The earliest time a pending delivery that claimDue could lease falls due
   * (its endpoint enabled, not deleted and not excluded), if any.
   */
  nextDueAt(excludeEndpoints?: readonly string[], excludeMerchants?: readonly string[]): Promise<Date | undefined>;
}
