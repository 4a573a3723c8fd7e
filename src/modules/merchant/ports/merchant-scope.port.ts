import type { MerchantReader } from './merchant-repository.port.ts';

/** The merchant module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface MerchantScope {
  readonly merchants: MerchantReader;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the merchant module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends MerchantScope {}
}
