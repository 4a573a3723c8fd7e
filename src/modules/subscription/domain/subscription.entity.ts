import type { DomainEvent, EventType, JsonValue } from '../../event/domain/domain-event.ts';
import type { LineItem } from '../../order/domain/order.entity.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { cycleDueAt, isLastCycle, retryDueAt, type Schedule } from './schedule.ts';

// A subscription: a vaulted card charged on a schedule, each cycle its own order. docs/recurring.md.

/** Prefix of every subscription id. */
export const SUBSCRIPTION_ID_PREFIX = 'sub_';

/**
 * trialing until the first cycle is due; active while cycles are charged; past_due while a failed
 * cycle is retried; then unpaid (charging stopped, the subscription kept) or canceled, as the
 * merchant chose; paused while the merchant holds collection; canceled is final.
 */
export type SubscriptionStatus = 'trialing' | 'active' | 'past_due' | 'unpaid' | 'paused' | 'canceled';

/** What becomes of a subscription whose retries are spent. */
export type AfterFailedRetries = 'unpaid' | 'cancel';
/** Every {@link AfterFailedRetries}, the default first. */
export const AFTER_FAILED_RETRIES: readonly AfterFailedRetries[] = ['unpaid', 'cancel'];

/** Why a subscription was canceled. */
export type CancellationReason = 'requested' | 'cycles_completed' | 'payment_failed' | 'customer_deleted';

export interface Subscription {
  readonly id: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly customerId: string;
  readonly cardId: string;
  readonly amount: bigint;
  readonly currency: string;
  /** The merchant's reference: every cycle's order carries it, with the cycle number. */
  readonly reference: string;
  readonly lineItems: readonly LineItem[];
  readonly schedule: Schedule;
  readonly afterFailedRetries: AfterFailedRetries;
  readonly status: SubscriptionStatus;
  /** The next cycle to charge (1 for the first). */
  readonly nextCycle: number;
  /** When the next charge (a cycle, or a retry of a failed one) is due; null when none will be. */
  readonly nextChargeAt: Date | null;
  /** Retries made of the cycle in arrears (0 while nothing failed). */
  readonly retries: number;
  /** When the cycle in arrears first failed. */
  readonly firstFailureAt: Date | null;
  /** Cancel once the current period ends instead of charging the next cycle. */
  readonly cancelAtPeriodEnd: boolean;
  readonly canceledAt: Date | null;
  readonly cancellationReason: CancellationReason | null;
  /** The test clock driving it (test mode), or null for the real time. */
  readonly testClockId: string | null;
  readonly version: number;
  readonly createdAt: Date;
}

/** The subscription at its next version and the event telling of it. */
export interface SubscriptionTransition {
  readonly subscription: Subscription;
  readonly event: DomainEvent;
}

type Ids = { readonly eventId: string; readonly now: Date };

/** The public shape of a subscription inside event data. */
export function subscriptionEventData(s: Subscription): { [key: string]: JsonValue } {
  return {
    id: s.id,
    customer: s.customerId,
    card: s.cardId,
    reference: s.reference,
    amount: Number(s.amount),
    currency: s.currency,
    status: s.status,
    interval: s.schedule.interval,
    interval_count: s.schedule.intervalCount,
    next_cycle: s.nextCycle,
    next_charge_at: s.nextChargeAt?.toISOString() ?? null,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    cancellation_reason: s.cancellationReason,
    livemode: s.livemode,
  };
}

function change(s: Subscription, changes: Partial<Subscription>, type: EventType, extra: { [key: string]: JsonValue }, ids: Ids): SubscriptionTransition {
  const next: Subscription = { ...s, ...changes, version: s.version + 1 };
  return {
    subscription: next,
    event: {
      id: ids.eventId,
      type,
      merchantId: next.merchantId,
      livemode: next.livemode,
      subject: { type: 'subscription', id: next.id },
      orderId: null,
      reference: next.reference,
      sequence: next.version,
      createdAt: ids.now,
      data: { ...subscriptionEventData(next), ...extra },
    },
  };
}

/** What a merchant asks for. */
export interface NewSubscription {
  readonly id: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly customerId: string;
  readonly cardId: string;
  readonly amount: bigint;
  readonly currency: string;
  readonly reference: string;
  readonly lineItems: readonly LineItem[];
  readonly schedule: Schedule;
  readonly afterFailedRetries: AfterFailedRetries;
  readonly testClockId: string | null;
}

/** A new subscription, trialing or active, its first cycle due at the billing anchor; subscription.created. */
export function startSubscription(input: NewSubscription, ids: Ids): SubscriptionTransition {
  const firstDue = cycleDueAt(input.schedule, 1);
  const s: Subscription = {
    ...input,
    status: input.schedule.trialDays > 0 ? 'trialing' : 'active',
    nextCycle: 1,
    nextChargeAt: firstDue,
    retries: 0,
    firstFailureAt: null,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    cancellationReason: null,
    version: 0,
    createdAt: ids.now,
  };
  return change(s, {}, 'subscription.created', {}, ids);
}

/** Whether the scheduler charges it now: a cycle or a retry is due, and collection is not paused. */
export function isDue(s: Subscription, now: Date): boolean {
  return (s.status === 'trialing' || s.status === 'active' || s.status === 'past_due') && s.nextChargeAt !== null && s.nextChargeAt.getTime() <= now.getTime();
}

/**
 * Whether the period that ends when the next cycle falls due ends the subscription instead (the
 * merchant asked to cancel at the period's end): then the next cycle is not charged.
 */
export function endsBeforeNextCycle(s: Subscription): boolean {
  // Not while a failed cycle is retried: its retries run on (or run out) first.
  return s.cancelAtPeriodEnd && s.firstFailureAt === null;
}

/**
 * Cycle `cycle` was paid by its order: subscription.charged with the order and its receipt URL; the
 * next cycle falls due on the schedule, or the subscription ends after its last cycle.
 */
export function noteCharged(s: Subscription, cycle: number, order: { readonly id: string; readonly data: { [key: string]: JsonValue }; readonly receiptUrl: string }, nextIds: () => Ids): SubscriptionTransition[] {
  const ids = nextIds();
  if (cycle !== s.nextCycle) throw new Error(`subscription ${s.id} charged cycle ${cycle} while cycle ${s.nextCycle} is next`);
  const last = isLastCycle(s.schedule, cycle);
  const charged = change(
    s,
    { status: 'active', nextCycle: cycle + 1, nextChargeAt: last ? null : cycleDueAt(s.schedule, cycle + 1), retries: 0, firstFailureAt: null },
    'subscription.charged',
    { cycle, order: order.data, receipt_url: order.receiptUrl },
    ids,
  );
  if (!last) return [charged];
  return [charged, cancelNow(charged.subscription, 'cycles_completed', nextIds())];
}

/**
 * Cycle `cycle`'s charge failed (declined): subscription.payment_failed with the decline; the cycle is
 * retried on the dunning schedule (past_due), and once the retries are spent the subscription becomes
 * unpaid or is canceled, as the merchant chose.
 */
export function noteChargeFailed(s: Subscription, cycle: number, failure: { readonly orderId: string; readonly declineCode: string | null }, nextIds: () => Ids): SubscriptionTransition[] {
  const ids = nextIds();
  if (cycle !== s.nextCycle) throw new Error(`subscription ${s.id} failed cycle ${cycle} while cycle ${s.nextCycle} is next`);
  const firstFailureAt = s.firstFailureAt ?? ids.now;
  const retries = s.firstFailureAt === null ? 0 : s.retries + 1;
  const nextRetry = retryDueAt(firstFailureAt, retries + 1);
  const failed = change(
    s,
    { status: 'past_due', retries, firstFailureAt, nextChargeAt: nextRetry },
    'subscription.payment_failed',
    { cycle, order_id: failure.orderId, decline_code: failure.declineCode, attempt: retries + 1, next_retry_at: nextRetry?.toISOString() ?? null },
    ids,
  );
  if (nextRetry !== null) return [failed];
  const after = failed.subscription;
  if (s.afterFailedRetries === 'cancel') return [failed, cancelNow(after, 'payment_failed', nextIds())];
  return [failed, change(after, { status: 'unpaid', nextChargeAt: null }, 'subscription.updated', { previous_status: 'past_due' }, nextIds())];
}

/** What a merchant may do to a subscription in a state. */
export type SubscriptionAction = 'cancel' | 'pause' | 'resume';

const ALLOWED: { readonly [A in SubscriptionAction]: readonly SubscriptionStatus[] } = {
  cancel: ['trialing', 'active', 'past_due', 'unpaid', 'paused'],
  pause: ['trialing', 'active', 'past_due'],
  resume: ['paused', 'unpaid'],
};

/**
 * Whether the subscription's state allows the action.
 * @throws DomainError subscription.state_invalid
 */
export function assertAllowed(s: Subscription, action: SubscriptionAction): void {
  if (!ALLOWED[action].includes(s.status)) {
    throw new DomainError('subscription.state_invalid', `Subscription ${s.id} is ${s.status}: it cannot be ${action === 'cancel' ? 'canceled' : action === 'pause' ? 'paused' : 'resumed'}.`);
  }
}

/** Canceled now: nothing more is charged (subscription.canceled). */
export function cancelNow(s: Subscription, reason: CancellationReason, ids: Ids): SubscriptionTransition {
  if (s.status === 'canceled') throw new Error(`subscription ${s.id} is canceled already`);
  return change(s, { status: 'canceled', nextChargeAt: null, canceledAt: ids.now, cancellationReason: reason, cancelAtPeriodEnd: false }, 'subscription.canceled', {}, ids);
}

/** Cancel when the current period ends: the next cycle is not charged (subscription.updated). */
export function cancelAtPeriodEnd(s: Subscription, ids: Ids): SubscriptionTransition {
  return change(s, { cancelAtPeriodEnd: true }, 'subscription.updated', { cancel_at_period_end: true }, ids);
}

/** Another saved card is charged from now on; a cycle in arrears is retried on its schedule (subscription.updated). */
export function changeCard(s: Subscription, cardId: string, ids: Ids): SubscriptionTransition {
  if (s.status === 'canceled') throw new DomainError('subscription.state_invalid', `Subscription ${s.id} is canceled: it cannot be changed.`);
  return change(s, { cardId }, 'subscription.updated', { previous_card: s.cardId }, ids);
}

/** Collection paused: no cycle is charged until resumed (subscription.paused). */
export function pause(s: Subscription, ids: Ids): SubscriptionTransition {
  return change(s, { status: 'paused', nextChargeAt: null }, 'subscription.paused', {}, ids);
}

/**
 * Collection resumed: cycles whose dates passed while paused are skipped (not charged), and the
 * next cycle is the first due after `now` (subscription.resumed). An unpaid subscription resumed
 * leaves its cycle in arrears failed and charges on from the next cycle.
 */
export function resume(s: Subscription, ids: Ids): SubscriptionTransition {
  // An unpaid subscription's cycle in arrears is left failed (its order expires): charging resumes with the next one.
  const from = s.status === 'unpaid' ? s.nextCycle + 1 : s.nextCycle;
  if (s.status === 'unpaid' && isLastCycle(s.schedule, s.nextCycle)) {
    return change(s, { status: 'canceled', nextChargeAt: null, canceledAt: ids.now, cancellationReason: 'cycles_completed', retries: 0, firstFailureAt: null }, 'subscription.canceled', {}, ids);
  }
  let cycle = from;
  while (cycleDueAt(s.schedule, cycle).getTime() < ids.now.getTime() && !isLastCycle(s.schedule, cycle)) cycle++;
  const due = cycleDueAt(s.schedule, cycle);
  // Still before the first cycle of a trial: trialing again.
  const status = cycle === 1 && s.schedule.trialDays > 0 && due.getTime() > ids.now.getTime() ? 'trialing' : 'active';
  return change(s, { status, nextCycle: cycle, nextChargeAt: due.getTime() < ids.now.getTime() ? ids.now : due, retries: 0, firstFailureAt: null }, 'subscription.resumed', { skipped_cycles: cycle - from }, ids);
}
