import type { EventOutbox } from './event-outbox.port.ts';
import type { MerchantReader } from './merchant-repository.port.ts';
import type { OrderRepository } from './order-repository.port.ts';
import type { PaymentRepository } from './payments/payment-repository.port.ts';

/**
 * The repositories bound to one transaction: what a use case changes, and
 * the outbox its events go to, commit together or not at all. A concept that
 * comes with the next capabilities (refunds, payouts, the ledger) adds its
 * repository here.
 */
export interface TransactionScope {
  readonly orders: OrderRepository;
  readonly payments: PaymentRepository;
  readonly merchants: MerchantReader;
  readonly outbox: EventOutbox;
}

/** Runs work in one database transaction: all of it commits, or none. */
export interface UnitOfWork {
  run<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T>;
}
