import type { PaymentAttempt } from '../domain/payment/payment-attempt.entity.ts';

/** Stores payment attempts. */
export interface PaymentAttemptRepository {
  /** Records a new attempt. */
  insert(attempt: PaymentAttempt): Promise<void>;
  /** Records how an attempt ended (or that it waits for authentication). */
  recordOutcome(attempt: PaymentAttempt): Promise<void>;
  /** The attempts of one submission, first leg first. */
  findBySubmission(orderId: string, submissionId: string): Promise<PaymentAttempt[]>;
  findById(orderId: string, attemptId: string): Promise<PaymentAttempt | undefined>;
  /** Every attempt of the order, oldest first. */
  listForOrder(orderId: string): Promise<PaymentAttempt[]>;
  /** Every attempt of these orders, oldest first, grouped by order id. */
  listForOrders(orderIds: readonly string[]): Promise<Map<string, PaymentAttempt[]>>;
}
