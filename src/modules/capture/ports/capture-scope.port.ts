import type { CaptureRequests } from './capture-request.port.ts';

/** The capture module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface CaptureScope {
  /** Captures asked of the acquirer and not yet recorded. */
  readonly captures: CaptureRequests;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the capture module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends CaptureScope {}
}
