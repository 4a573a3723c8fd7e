import type { PaymentRepository } from './payment-repository.port.ts';
import type { PaymentRouteRepository } from './payment-route-repository.port.ts';

/** The payment module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface PaymentScope {
  readonly payments: PaymentRepository;
  /** Each merchant's ordered processor routes per mode, read when a payment starts. */
  readonly paymentRoutes: PaymentRouteRepository;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the payment module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends PaymentScope {}
}
