import type { DisputeRepository } from './dispute-repository.port.ts';
import type { EvidenceRepository } from './evidence-repository.port.ts';

/** The dispute module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface DisputeScope {
  readonly disputes: DisputeRepository;
  /** The merchant's evidence of each order. */
  readonly evidence: EvidenceRepository;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the dispute module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends DisputeScope {}
}
