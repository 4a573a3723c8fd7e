import type { PayoutRepository } from './payout-repository.port.ts';

/** The payout module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface PayoutScope {
  readonly payouts: PayoutRepository;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the payout module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends PayoutScope {}
}
