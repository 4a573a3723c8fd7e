import type { CustomerRepository } from './customer-repository.port.ts';
import type { CardVault } from './card-vault.port.ts';

/** The customer module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface CustomerScope {
  readonly customers: CustomerRepository;
  /** Vaulted cards, card tokens and fingerprint secrets, sealed. */
  readonly vault: CardVault;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the customer module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends CustomerScope {}
}
