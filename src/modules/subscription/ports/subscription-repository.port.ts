import type { Scope } from '../../merchant/domain/caller.ts';
import type { Subscription } from '../domain/subscription.entity.ts';
import type { BillingInterval, TestClock } from '../domain/test-clock.ts';

/** A cycle's order and how many charges of it were started and taken in by the subscription. */
export interface SubscriptionCycle {
  readonly subscriptionId: string;
  readonly cycle: number;
  readonly orderId: string;
  readonly chargesStarted: number;
  readonly chargesRecorded: number;
  /** When the latest charge was counted (the real time); null before any. */
  readonly chargeStartedAt: Date | null;
}

/** Subscriptions read outside a transaction (the API, the scheduler's search). */
export interface SubscriptionReader {
  findById(scope: Scope, id: string): Promise<Subscription | undefined>;
  /** Newest first. @throws UnknownCursorError when startingAfter is not a subscription of the scope */
  list(scope: Scope, query: { readonly limit: number; readonly startingAfter: string | undefined; readonly customerId: string | undefined }): Promise<{ subscriptions: Subscription[]; hasMore: boolean }>;
  /**
   * Subscriptions with a charge due by `now`: on the real time (testClockId null), or on one test
   * clock; soonest first.
   */
  due(now: Date, testClockId: string | null, limit: number): Promise<string[]>;
  /**
   * Leases up to `limit` subscriptions on the real time with a charge due by `now` (soonest first)
   * to one biller until `leaseUntil`: several billers at once take different ones; a biller that
   * stops leaves its lease to run out.
   */
  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<string[]>;
  /** When the next charge of a test clock's subscriptions is due (the earliest), or null. */
  nextDueOnClock(testClockId: string): Promise<Date | null>;
  /**
   * Leases up to `limit` advancing test clocks no biller holds (never leased, or whose lease ended
   * by `now`) to one biller until `leaseUntil`, the least recently worked on first: several billers
   * at once take different clocks; a biller that stops leaves its lease to run out.
   */
  claimAdvancingClocks(now: Date, leaseUntil: Date, limit: number): Promise<TestClock[]>;
  /** The cycles charged or being charged, first first. */
  cyclesOf(subscriptionId: string): Promise<SubscriptionCycle[]>;
}

/** Subscriptions changed in a transaction, with their events. */
export interface SubscriptionRepository {
  insert(subscription: Subscription): Promise<void>;
  /** The subscription, its row locked until the transaction ends; skipped (undefined) when another holds it and `skipLocked`. */
  lock(id: string, options?: { readonly skipLocked?: boolean }): Promise<Subscription | undefined>;
  /** A customer's subscriptions, their rows locked until the transaction ends. */
  lockOfCustomer(customerId: string): Promise<Subscription[]>;
  /** Stores a transition (every field that changes, and the version). */
  save(subscription: Subscription): Promise<void>;
  /** The cycle's row, if its order was made. */
  findCycle(subscriptionId: string, cycle: number): Promise<SubscriptionCycle | undefined>;
  /** Records the cycle's order; a cycle already recorded (another scheduler) is left as it is. Answers the cycle as stored. */
  addCycle(cycle: Omit<SubscriptionCycle, 'chargesStarted' | 'chargesRecorded' | 'chargeStartedAt'>, at: Date): Promise<SubscriptionCycle>;
  /** Counts a charge started on the cycle's order (before the acquirer is asked), at the real time `at`. */
  noteChargeStarted(subscriptionId: string, cycle: number, at: Date): Promise<void>;
  /** Counts the charges whose outcome the subscription has taken in. */
  noteChargesRecorded(subscriptionId: string, cycle: number, recorded: number): Promise<void>;
}

/** Test clocks. */
export interface TestClockRepository {
  insert(clock: TestClock): Promise<void>;
  /** A merchant's clock (test mode only), undefined for another's or a deleted one. */
  findById(merchantId: string, id: string): Promise<TestClock | undefined>;
  /** The clock, its row locked until the transaction ends (one advance at a time). */
  lock(id: string): Promise<TestClock | undefined>;
  /**
   * The ids of the merchant's clocks advancing now. Holds a lock until the transaction ends that
   * every other caller of it for the same merchant waits for, so that a count it answers stays true
   * until then (two advance requests at once cannot both pass the merchant's bound).
   */
  advancingOf(merchantId: string): Promise<string[]>;
  /** The periods of the subscriptions that bill on the clock (trialing, active, past_due), each once. */
  billingIntervals(id: string): Promise<BillingInterval[]>;
  /** Stores the clock's time, status, target, lease and version. */
  save(clock: TestClock): Promise<void>;
}
