import type { LedgerJournal } from './ledger.port.ts';

/** The ledger module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface LedgerScope {
  /** The money each change moves, posted with the change. */
  readonly ledger: LedgerJournal;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the ledger module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends LedgerScope {}
}
