import type { Order } from '../domain/order/order.entity.ts';
import type { Scope } from '../domain/merchant/caller.ts';

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

/** What {@link RequestLedger.reserve} found. */
export type Reservation =
  /** The key is ours: do the work, then complete() it (or release() it on failure). */
  | { readonly kind: 'reserved' }
  /** The same request finished earlier: answer its response. */
  | { readonly kind: 'replay'; readonly response: unknown }
  /** The same key is held by a request still running. */
  | { readonly kind: 'in_progress' }
  /** The key was used for another operation or another request. */
  | { readonly kind: 'mismatch'; readonly operation: string };

/**
 * Idempotency keys of any operation: a key is reserved before the work, its
 * response stored after it, and a repeat within the retention window is
 * answered from that response. Same table, scope and retention as orders.
 */
export interface RequestLedger {
  /**
   * Reserves the key for this request. A reservation left by a request that
   * died (older than staleAfterMs) is taken over by a repeat of the same request.
   */
  reserve(request: KeyedRequest, staleAfterMs: number): Promise<Reservation>;
  /** Stores the response of a reserved request. */
  complete(request: KeyedRequest, resourceId: string, response: unknown): Promise<void>;
  /** Gives the key back after the work failed, so that a corrected request can use it. */
  release(request: KeyedRequest): Promise<void>;
}
