import type { PaymentAttempt } from '../domain/payment/payment-attempt.entity.ts';
import type { AttemptTally } from '../domain/payment/velocity.ts';

/** Whose recent attempts to count: one merchant in one mode, or one client address. */
export type TallyScope = { readonly merchantId: string; readonly livemode: boolean } | { readonly clientAddress: string };

/** Stores payment attempts. */
export interface PaymentAttemptRepository {
  /** Records a new attempt. */
  insert(attempt: PaymentAttempt): Promise<void>;
  /** Records how an attempt ended (or that it waits for authentication). */
  recordOutcome(attempt: PaymentAttempt): Promise<void>;
  /**
   * Customer submissions (retry legs not counted) created after since, and
   * how many were declined; one still processing counts as declined until it ends.
   */
  tally(scope: TallyScope, since: Date): Promise<AttemptTally>;
  /** Makes other transactions that call this for the same scope wait until the current one ends. */
  serialiseTally(scope: TallyScope): Promise<void>;
  /**
   * Locks up to limit attempts left processing since before.processing or
   * awaiting reversal since before.reversal (skipping rows another worker
   * holds) and renews their updated_at to now, so that no other sweeper takes
   * them until they are stale again.
   */
  claimUnsettled(before: { readonly processing: Date; readonly reversal: Date }, now: Date, limit: number): Promise<PaymentAttempt[]>;
  /** The attempts of one submission, first leg first. */
  findBySubmission(orderId: string, submissionId: string): Promise<PaymentAttempt[]>;
  findById(orderId: string, attemptId: string): Promise<PaymentAttempt | undefined>;
  /** Every attempt of the order, oldest first. */
  listForOrder(orderId: string): Promise<PaymentAttempt[]>;
  /** Every attempt of these orders, oldest first, grouped by order id. */
  listForOrders(orderIds: readonly string[]): Promise<Map<string, PaymentAttempt[]>>;
}
