import type { SubscriptionRepository, TestClockRepository } from './subscription-repository.port.ts';

/** The subscription module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface SubscriptionScope {
  readonly subscriptions: SubscriptionRepository;
  readonly testClocks: TestClockRepository;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the subscription module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends SubscriptionScope {}
}
