import type { OrderRepository } from './order-repository.port.ts';

/** The order module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface OrderScope {
  readonly orders: OrderRepository;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the order module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends OrderScope {}
}
