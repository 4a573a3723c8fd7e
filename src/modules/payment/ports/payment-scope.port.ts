import type { PaymentRepository } from './payment-repository.port.ts';

/** The payment module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface PaymentScope {
  readonly payments: PaymentRepository;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the payment module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends PaymentScope {}
}
