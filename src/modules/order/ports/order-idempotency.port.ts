import type { Order } from '../domain/order.entity.ts';
import type { Scope } from '../../../kernel/domain/caller.ts';

/** A remembered request: what was asked under a key and what was answered. */
export interface IdempotencyRecord {
  readonly scope: Scope;
  readonly key: string;
  /** The operation the key was first used for, e.g. "orders.create". */
  readonly operation: string;
  /** Hash of the canonical request. */
  readonly fingerprint: string;
  /** The original response: the order as it was created. */
  readonly order: Order;
}

/** Result of {@link IdempotencyStore.claim}. */
export type ClaimResult = { readonly claimed: true } | { readonly claimed: false; readonly existing: IdempotencyRecord };

/** Remembers the idempotency keys of order creation per merchant and mode (the kernel's RequestLedger keeps every other operation's, in the same table). */
export interface IdempotencyStore {
  /**
   * Claims the key for this request inside the current transaction. The
   * database's unique constraint decides between concurrent claims: the loser
   * waits for the winner's commit and then gets the winner's record.
   */
  claim(record: IdempotencyRecord): Promise<ClaimResult>;
}
