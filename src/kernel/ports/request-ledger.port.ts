import type { Scope } from '../domain/caller.ts';

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
