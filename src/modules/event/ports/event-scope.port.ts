import type { EventOutbox } from './event-outbox.port.ts';

/** The event module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface EventScope {
  readonly outbox: EventOutbox;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the event module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends EventScope {}
}
