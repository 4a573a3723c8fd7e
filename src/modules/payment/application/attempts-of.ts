import type { PaymentAttempt } from '../domain/payment-attempt.entity.ts';
import type { PaymentRepository } from '../ports/payment-repository.port.ts';

/** Every attempt of an order, oldest first. */
export async function attemptsOf(payments: Pick<PaymentRepository, 'listAttemptsForOrders'>, orderId: string): Promise<PaymentAttempt[]> {
  return (await payments.listAttemptsForOrders([orderId])).get(orderId) ?? [];
}
