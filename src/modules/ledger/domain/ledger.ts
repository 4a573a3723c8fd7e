// The double-entry ledger: every movement of money is one transaction of two or more entries whose
// debits equal their credits in each currency. docs/money.md names the accounts and draws how money
// moves between them.

/**
 * The accounts each merchant has, per mode and currency. The merchant's own money:
 * - `merchant_pending`: captured, not yet settled (credit-normal: the platform owes it);
 * - `merchant_available`: settled, waiting for a payout;
 * - `payouts_in_transit`: paid out, not yet arrived at the merchant's bank.
 * The platform's side of each movement:
 * - `acquirer_clearing`: what the card networks (or the bank, for a transfer) owe us (debit-normal);
 * - `fees_earned`: our fees (credit-normal);
 * - `currency_conversion`: the bridge between an order's currency and the settlement currency;
 * - `dispute_reserve`: disputed money held back;
 * - `payouts_paid`: money that has left for merchants' banks.
 */
export type LedgerAccount =
  | 'merchant_pending'
  | 'merchant_available'
  | 'payouts_in_transit'
  | 'acquirer_clearing'
  | 'fees_earned'
  | 'currency_conversion'
  | 'dispute_reserve'
  | 'payouts_paid';

/** Every account, in the order docs/money.md lists them. */
export const LEDGER_ACCOUNTS: readonly LedgerAccount[] = [
  'merchant_pending',
  'merchant_available',
  'payouts_in_transit',
  'acquirer_clearing',
  'fees_earned',
  'currency_conversion',
  'dispute_reserve',
  'payouts_paid',
];

/** What an entry is for, so a payout can itemise it: the gross, each kind of fee, a conversion. */
export type EntryPurpose = 'gross' | 'percentage_fee' | 'fixed_fee' | 'conversion' | 'refund' | 'settlement' | 'payout' | 'dispute' | 'dispute_fee' | 'dispute_reversal';

/** One side of a movement: a debit is a positive amount, a credit a negative one (minor units). */
export interface LedgerEntry {
  readonly account: LedgerAccount;
  readonly currency: string;
  readonly amount: bigint;
  readonly purpose: EntryPurpose;
}

/** What caused a transaction; with the cause's id it derives the transaction's id. */
export type LedgerTransactionKind =
  | 'capture'
  | 'refund'
  | 'void'
  | 'settle'
  | 'payout'
  | 'payout_paid'
  | 'payout_failure'
  | 'dispute_withdrawal'
  | 'dispute_reinstatement'
  | 'dispute_loss';

/** One movement of money, posted at once or not at all. */
export interface LedgerTransaction {
  /** Derived from the cause (`ltx_<kind>_<cause id>`), so a retry or a redelivery cannot post it twice. */
  readonly id: string;
  readonly kind: LedgerTransactionKind;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly orderId: string | null;
  readonly paymentId: string | null;
  readonly refundId: string | null;
  /** The payout it moves (a payout's own transactions); absent or null otherwise. */
  readonly payoutId?: string | null;
  /** The dispute behind it (dispute_* kinds); absent or null otherwise. */
  readonly disputeId?: string | null;
  /** The merchant's reference of the order behind it. */
  readonly reference: string | null;
  readonly entries: readonly LedgerEntry[];
  readonly createdAt: Date;
}

/** The id of the transaction `kind` caused by the object `causeId`. */
export function ledgerTransactionId(kind: LedgerTransactionKind, causeId: string): string {
  return `ltx_${kind}_${causeId}`;
}

/**
 * Why a transaction cannot be posted: fewer than two entries, an entry of zero, or debits that do not
 * equal credits in some currency; undefined when it balances.
 */
export function unbalancedReason(entries: readonly LedgerEntry[]): string | undefined {
  if (entries.length < 2) return `a transaction needs at least two entries (has ${entries.length})`;
  const sums = new Map<string, bigint>();
  for (const entry of entries) {
    if (entry.amount === 0n) return `an entry of ${entry.account} is zero`;
    sums.set(entry.currency, (sums.get(entry.currency) ?? 0n) + entry.amount);
  }
  for (const [currency, sum] of sums) {
    if (sum !== 0n) return `debits and credits differ by ${sum} in ${currency}`;
  }
  return undefined;
}

/**
 * Builds a transaction from its movements, leaving out movements of zero (a fee waived, say).
 * @throws Error when what remains does not balance: a bug in the posting rule, never the caller's input.
 */
export function ledgerTransaction(fields: Omit<LedgerTransaction, 'entries'>, entries: readonly LedgerEntry[]): LedgerTransaction {
  const kept = entries.filter((e) => e.amount !== 0n);
  const reason = unbalancedReason(kept);
  if (reason) throw new Error(`ledger transaction ${fields.id} does not balance: ${reason}`);
  return { ...fields, entries: kept };
}

/** A debit of one account and a credit of another, for the same amount. */
export function debitCredit(debit: LedgerAccount, credit: LedgerAccount, currency: string, amount: bigint, purpose: EntryPurpose): LedgerEntry[] {
  return [
    { account: debit, currency, amount, purpose },
    { account: credit, currency, amount: -amount, purpose },
  ];
}
