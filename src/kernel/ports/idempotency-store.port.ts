import type { Order } from '../../modules/order/domain/order.entity.ts';
import type { Scope } from '../../modules/merchant/domain/caller.ts';

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

/** Remembers idempotency keys per merchant and mode. */
export interface IdempotencyStore {
  /**
   * Claims the key for this request inside the current transaction. The
   * database's unique constraint decides between concurrent claims: the loser
   * waits for the winner's commit and then gets the winner's record.
   */
  claim(record: IdempotencyRecord): Promise<ClaimResult>;
}

/** A request carrying an idempotency key, for any operation other than order creation. */
export interface KeyedRequest {
  readonly scope: Scope;
  readonly key: string;
  /** e.g. "test_helpers.simulate_transfer". */
  readonly operation: string;
  /** Hash of the request message. */
  readonly fingerprint: string;
}

/** What {@link RequestLedger.claim} found. */
export type Claim =
  /** The key is this transaction's: do the work in it, then complete() it before the commit. */
  | { readonly kind: 'claimed' }
  /** The same request committed earlier: answer its response. */
  | { readonly kind: 'replay'; readonly response: unknown }
  /** The key was used for another operation or another request. */
  | { readonly kind: 'mismatch'; readonly operation: string };

/**
 * Idempotency keys of any operation, in the transaction of the work: the
 * key is claimed first (a concurrent request with the same key waits on it
 * until this transaction ends), the response stored before the commit, and a
 * repeat within the retention window is answered from it. A transaction that
 * fails takes its claim with it. Same table, scope and retention as orders.
 */
export interface RequestLedger {
  /** Claims the key for this request in the current transaction, or answers what holds it. */
  claim(request: KeyedRequest): Promise<Claim>;
  /** Stores the response of the claimed request, in the same transaction. */
  complete(request: KeyedRequest, resourceId: string, response: unknown): Promise<void>;
}
