import type { RefundRepository } from './refund-repository.port.ts';

/** The refund module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface RefundScope {
  readonly refunds: RefundRepository;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the refund module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends RefundScope {}
}
