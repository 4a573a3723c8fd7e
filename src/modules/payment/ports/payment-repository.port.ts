import type { Scope } from '../../merchant/domain/caller.ts';
import type { PaymentAttempt } from '../domain/payment-attempt.entity.ts';
import type { PaymentChange, PaymentRecord } from '../domain/payment.entity.ts';
import type { AttemptTally } from '../domain/velocity.ts';

/** Whose recent attempts to count: one merchant in one mode, or one client address. */
export type TallyScope = { readonly merchantId: string; readonly livemode: boolean } | { readonly clientAddress: string };

/**
 * Stores payments with the attempts behind them. Every write is a named
 * kind of change, made by the domain (src/modules/payment/domain/payment.entity.ts),
 * and writes the payment and the leg it happened on together.
 */
export interface PaymentRepository {
  /** Stores a new payment with its first leg. */
  start(change: PaymentChange): Promise<void>;
  /** The first leg declined softly and failed; the payment goes on with a new leg. */
  retryOnAlternative(change: PaymentChange & { readonly failedLeg: PaymentAttempt }): Promise<void>;
  /** The issuer asks for authentication: status, processor reference and test code. */
  recordChallenge(change: PaymentChange): Promise<void>;
  /** An answer to the challenge runs: status only. */
  claimChallenge(change: PaymentChange): Promise<void>;
  /** The authorization's processor reference, kept before the capture. */
  recordAuthorization(change: PaymentChange): Promise<void>;
  /** Authorized for a manual capture: status, the leg's authentication. */
  markAuthorized(change: PaymentChange): Promise<void>;
  /** Captured: status, the capture, the leg's authentication. */
  markCaptured(change: PaymentChange): Promise<void>;
  /** Declined, authentication failed, or abandoned: status, decline code, authentication. */
  recordDecline(change: PaymentChange): Promise<void>;
  /** Released before capture: status and reason. */
  cancel(change: PaymentChange): Promise<void>;
  /** To be reversed at the acquirer: status, reason, the reference to reverse, the capture when known. */
  holdForReversal(change: PaymentChange): Promise<void>;
  /** Reversed at the acquirer: status. */
  markReversed(change: PaymentChange): Promise<void>;

  /** The payment with its attempts, in the scope; undefined for another merchant's or mode's. */
  findById(scope: Scope, paymentId: string): Promise<PaymentRecord | undefined>;
  /** The payment one attempt of the order is a leg of, with that attempt. */
  findByAttempt(orderId: string, attemptId: string): Promise<PaymentChange | undefined>;
  /** The payment of one submission, with its legs, first leg first. */
  findBySubmission(orderId: string, submissionId: string): Promise<PaymentRecord | undefined>;
  /** Every payment of the order, oldest first, each with its legs. */
  listForOrder(orderId: string): Promise<PaymentRecord[]>;
  /** Every attempt of these orders, oldest first, grouped by order id. */
  listAttemptsForOrders(orderIds: readonly string[]): Promise<Map<string, PaymentAttempt[]>>;
  /**
   * Customer submissions (retry legs not counted) created after since, and
   * how many were declined; one still processing counts as declined until it ends.
   */
  tally(scope: TallyScope, since: Date): Promise<AttemptTally>;
  /** Makes other transactions that call this for the same scope wait until the current one ends. */
  serialiseTally(scope: TallyScope): Promise<void>;
  /**
   * Locks up to limit legs left processing since before.processing or
   * awaiting reversal since before.reversal (skipping rows another worker
   * holds), renews their updated_at to now so that no other sweeper takes
   * them until they are stale again, and answers them with their payments.
   */
  claimUnsettled(before: { readonly processing: Date; readonly reversal: Date }, now: Date, limit: number): Promise<PaymentChange[]>;
}
