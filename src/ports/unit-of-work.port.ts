import type { EventOutbox } from './event-outbox.port.ts';
import type { OrderRepository } from './order-repository.port.ts';
import type { PaymentAttemptRepository } from './payment-attempt-repository.port.ts';

/** The repositories bound to one transaction. */
export interface TransactionScope {
  readonly orders: OrderRepository;
  readonly outbox: EventOutbox;
  readonly attempts: PaymentAttemptRepository;
}

/** Runs work in one database transaction: all of it commits, or none. */
export interface UnitOfWork {
  run<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T>;
}
