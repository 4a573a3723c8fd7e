import type { PaymentLinkRepository } from './payment-link-repository.port.ts';

/** The payment link module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface PaymentLinkScope {
  /** Payment links: locked by a payment that starts on one of their orders, counted when it is paid. */
  readonly links: PaymentLinkRepository;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the payment link module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends PaymentLinkScope {}
}
