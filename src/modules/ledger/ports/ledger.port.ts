import type { LedgerAccount, LedgerTransaction } from '../domain/ledger.ts';

/** Posts ledger transactions, in the transaction of the change that caused them. */
export interface LedgerJournal {
  /**
   * Posts the transaction with its entries; false when one with its id is posted already (a retry
   * or a redelivery of the same cause), which then posts nothing.
   */
  post(transaction: LedgerTransaction): Promise<boolean>;
  /** A posted transaction with its entries, in the order they were posted. */
  find(transactionId: string): Promise<LedgerTransaction | undefined>;
}

/** One account's balance: the sum of its entries (debit-normal accounts positive, credit-normal negative). */
export interface AccountBalance {
  readonly account: LedgerAccount;
  readonly currency: string;
  readonly balance: bigint;
}

/** A broken invariant, named as docs/money.md names it, with an example of what breaks it. */
export interface LedgerViolation {
  readonly invariant: string;
  readonly detail: string;
}

/** Reads the ledger and checks its invariants. */
export interface LedgerAudit {
  /** The balances of one merchant in one mode. */
  balances(merchantId: string, livemode: boolean): Promise<AccountBalance[]>;
  /** Every invariant checked in turn; the first broken one, or undefined when all hold. */
  verify(): Promise<LedgerViolation | undefined>;
}
