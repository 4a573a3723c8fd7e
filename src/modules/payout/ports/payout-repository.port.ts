import type { Scope } from '../../merchant/domain/caller.ts';
import type { Payout, PayoutItem, PayoutOrder, PayoutStatus } from '../domain/payout.entity.ts';

/** What one payout run takes. */
export interface PayoutRun {
  readonly now: Date;
  /** The run holds what was settled (or posted on the available balance) until then. */
  readonly cutoff: Date;
  /** The day (YYYY-MM-DD) its payouts are expected at the bank. */
  readonly arrivalDate: string;
  /** Only this merchant's money in this mode (the test helper); every merchant's when absent. */
  readonly scope?: Scope;
  /** A scheduled run claims its day (YYYY-MM-DD): a day already claimed makes nothing. */
  readonly day?: string;
  /** Where test-mode payouts go. */
  readonly sandboxIban: string;
  /** A new payout id. */
  newId(): string;
}

/**
 * Makes payouts, set-based, in one database transaction of its own: for each merchant, mode and
 * currency whose money not yet paid out adds up to more than zero, one pending payout with an item
 * per ledger transaction behind that money, and the payout's ledger transaction (available → in
 * transit). A crash leaves nothing half-made; a repeat finds nothing left to pay out. Runs are one
 * at a time (a lock), and an item's transaction is paid out once (a unique key).
 */
export interface PayoutBatcher {
  /** Answers the ids of the payouts made, or undefined when `run.day` was claimed already. */
  makePayouts(run: PayoutRun): Promise<string[] | undefined>;
}

/** A page of payouts or of a payout's items. */
export interface PayoutPageQuery {
  readonly limit: number;
  readonly startingAfter: string | undefined;
}

/** Payouts read by the API and the workers. */
export interface PayoutReader {
  findById(scope: Scope, id: string): Promise<Payout | undefined>;
  /** Newest first. */
  list(scope: Scope, query: PayoutPageQuery & { readonly status: PayoutStatus | undefined }): Promise<{ payouts: Payout[]; hasMore: boolean }>;
  /** In the order the run made them. @throws UnknownCursorError when startingAfter is not an item of the payout */
  listItems(payoutId: string, query: PayoutPageQuery): Promise<{ items: PayoutItem[]; hasMore: boolean }>;
  /** Payouts to move: pending ones (to send) and in-transit ones due by `today` (to arrive), in `scope` when given. */
  moving(today: string, scope: Scope | undefined, limit: number): Promise<{ toSend: string[]; toArrive: string[] }>;
}

/** Payouts changed in a transaction (with their events and ledger transactions). */
export interface PayoutRepository {
  /** The payout, its row locked until the transaction ends. */
  lock(id: string): Promise<Payout | undefined>;
  /** Stores a transition: status, failure code, version. */
  save(payout: Payout): Promise<void>;
  /** The distinct orders behind a payout with their references, the first `limit` of them. */
  ordersOf(payoutId: string, limit: number): Promise<PayoutOrder[]>;
}
