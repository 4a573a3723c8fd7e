import type { Money } from '../../../kernel/domain/money.ts';
import { convert, type SettlementBreakdown } from '../../payment/domain/settlement.ts';
import { debitCredit, ledgerTransaction, ledgerTransactionId, type LedgerTransaction } from './ledger.ts';

// The posting rules: which accounts each event of an order's life moves money between.

/** What a capture posts from. */
export interface CaptureFacts {
  readonly paymentId: string;
  readonly orderId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly reference: string;
  /** The amount captured, in the order's currency. */
  readonly captured: Money;
  /** The same amount in the merchant's settlement currency, with its fees. */
  readonly settlement: SettlementBreakdown;
  readonly at: Date;
}

/**
 * A capture: the acquirer owes us the gross (acquirer_clearing), which we owe the merchant
 * (merchant_pending) less our fees (fees_earned). When the order's currency is not the settlement
 * currency, the gross passes through currency_conversion, which balances in each currency.
 */
export function capturePosting(facts: CaptureFacts): LedgerTransaction {
  const { captured, settlement } = facts;
  const settled = settlement.gross;
  const gross =
    captured.currency === settled.currency
      ? debitCredit('acquirer_clearing', 'merchant_pending', settled.currency, settled.amount, 'gross')
      : [
          ...debitCredit('acquirer_clearing', 'currency_conversion', captured.currency, captured.amount, 'conversion'),
          ...debitCredit('currency_conversion', 'merchant_pending', settled.currency, settled.amount, 'gross'),
        ];
  return ledgerTransaction(
    {
      id: ledgerTransactionId('capture', facts.paymentId),
      kind: 'capture',
      merchantId: facts.merchantId,
      livemode: facts.livemode,
      orderId: facts.orderId,
      paymentId: facts.paymentId,
      refundId: null,
      reference: facts.reference,
      createdAt: facts.at,
    },
    [
      ...gross,
      ...debitCredit('merchant_pending', 'fees_earned', settled.currency, settlement.percentageFee, 'percentage_fee'),
      ...debitCredit('merchant_pending', 'fees_earned', settled.currency, settlement.fixedFee, 'fixed_fee'),
    ],
  );
}

/** What a succeeded refund posts from. */
export interface RefundFacts {
  readonly refundId: string;
  readonly paymentId: string;
  readonly orderId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly reference: string;
  /** The amount refunded, in the order's currency. */
  readonly refunded: Money;
  /** What the order's earlier refunds took, in the order's currency. */
  readonly refundedBefore: bigint;
  /** The merchant's settlement currency. */
  readonly settlementCurrency: string;
  /** Where the merchant's money for the order is: pending before settlement, available after. */
  readonly from: 'merchant_pending' | 'merchant_available';
  readonly at: Date;
}

/**
 * A refund: the merchant's balance (pending before the order is settled, available after) pays it, and we owe it to the acquirer, who
 * returns it to the card (acquirer_clearing). Fees are not returned. In another settlement
 * currency, the amount passes back through currency_conversion at the reference rate, converted as
 * the order's running total of refunds so that they add up to the converted capture exactly.
 */
export function refundPosting(facts: RefundFacts): LedgerTransaction {
  const { refunded } = facts;
  // Converted as a running total, not refund by refund: the converted refunds of an order add up to
  // the converted capture exactly, however many there are (one by one, each would round on its own,
  // and a thousand refunds of 1 fils would each convert to 0 EUR).
  const convertedTotal = (amount: bigint) => (convert({ amount, currency: refunded.currency }, facts.settlementCurrency) ?? { amount, currency: refunded.currency });
  const after = convertedTotal(facts.refundedBefore + refunded.amount);
  const converted = { currency: after.currency, amount: after.amount - convertedTotal(facts.refundedBefore).amount };
  const entries =
    converted.currency === refunded.currency
      ? debitCredit(facts.from, 'acquirer_clearing', refunded.currency, refunded.amount, 'refund')
      : [
          ...debitCredit(facts.from, 'currency_conversion', converted.currency, converted.amount, 'refund'),
          ...debitCredit('currency_conversion', 'acquirer_clearing', refunded.currency, refunded.amount, 'conversion'),
        ];
  return ledgerTransaction(
    {
      id: ledgerTransactionId('refund', facts.refundId),
      kind: 'refund',
      merchantId: facts.merchantId,
      livemode: facts.livemode,
      orderId: facts.orderId,
      paymentId: facts.paymentId,
      refundId: facts.refundId,
      reference: facts.reference,
      createdAt: facts.at,
    },
    entries,
  );
}

/**
 * A void before settlement: the capture's transaction undone entry by entry (fees included), so the
 * ledger stands as if nothing had been captured.
 */
export function voidPosting(capture: Pick<LedgerTransaction, 'merchantId' | 'livemode' | 'orderId' | 'paymentId' | 'reference' | 'entries'>, at: Date): LedgerTransaction {
  return ledgerTransaction(
    {
      id: ledgerTransactionId('void', capture.paymentId ?? ''),
      kind: 'void',
      merchantId: capture.merchantId,
      livemode: capture.livemode,
      orderId: capture.orderId,
      paymentId: capture.paymentId,
      refundId: null,
      reference: capture.reference,
      createdAt: at,
    },
    capture.entries.map((e) => ({ ...e, amount: -e.amount })),
  );
}

/** What a dispute's movements post from. */
export interface DisputeFacts {
  readonly disputeId: string;
  readonly paymentId: string;
  readonly orderId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly reference: string;
  /** The amount disputed, in the order's currency. */
  readonly disputed: Money;
  /** The same amount in the settlement currency: what the merchant's balance gives up and the reserve holds. */
  readonly withdrawn: Money;
  readonly at: Date;
}

function disputeTransaction(kind: 'dispute_withdrawal' | 'dispute_reinstatement' | 'dispute_loss', facts: DisputeFacts, entries: Parameters<typeof ledgerTransaction>[1]): LedgerTransaction {
  return ledgerTransaction(
    {
      id: ledgerTransactionId(kind, facts.disputeId),
      kind,
      merchantId: facts.merchantId,
      livemode: facts.livemode,
      orderId: facts.orderId,
      paymentId: facts.paymentId,
      refundId: null,
      disputeId: facts.disputeId,
      reference: facts.reference,
      createdAt: facts.at,
    },
    entries,
  );
}

/**
 * A dispute opened: the disputed amount (in the settlement currency) leaves the merchant's balance
 * (pending before the order is settled, available after) for dispute_reserve, and the dispute fee
 * goes to fees_earned.
 */
export function disputeWithdrawalPosting(facts: DisputeFacts & { readonly fee: Money; readonly from: 'merchant_pending' | 'merchant_available' }): LedgerTransaction {
  return disputeTransaction('dispute_withdrawal', facts, [
    ...debitCredit(facts.from, 'dispute_reserve', facts.withdrawn.currency, facts.withdrawn.amount, 'dispute'),
    ...debitCredit(facts.from, 'fees_earned', facts.fee.currency, facts.fee.amount, 'dispute_fee'),
  ]);
}

/**
 * A dispute won: the reserve returns the amount to the merchant (to pending if the order is not
 * settled yet, so that settlement moves it with the rest, else to available). The fee is kept.
 */
export function disputeReinstatementPosting(facts: DisputeFacts & { readonly to: 'merchant_pending' | 'merchant_available' }): LedgerTransaction {
  return disputeTransaction('dispute_reinstatement', facts, debitCredit('dispute_reserve', facts.to, facts.withdrawn.currency, facts.withdrawn.amount, 'dispute_reversal'));
}

/**
 * A dispute lost: the card network took the amount back from us, so the reserve pays acquirer_clearing,
 * in the order's currency through currency_conversion when the settlement currency differs.
 */
export function disputeLossPosting(facts: DisputeFacts): LedgerTransaction {
  const { disputed, withdrawn } = facts;
  return disputeTransaction(
    'dispute_loss',
    facts,
    disputed.currency === withdrawn.currency
      ? debitCredit('dispute_reserve', 'acquirer_clearing', disputed.currency, disputed.amount, 'dispute')
      : [
          ...debitCredit('dispute_reserve', 'currency_conversion', withdrawn.currency, withdrawn.amount, 'dispute'),
          ...debitCredit('currency_conversion', 'acquirer_clearing', disputed.currency, disputed.amount, 'conversion'),
        ],
  );
}

/** What a payout's arrival or failure posts from. */
export interface PayoutFacts {
  readonly payoutId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly amount: Money;
  readonly at: Date;
}

/**
 * A payout's own transactions. Its leaving (merchant_available → payouts_in_transit, kind payout) is
 * posted set-based by the run, in SQL (src/modules/payout/adapters/postgres/postgres-payouts.ts); these two
 * follow it one payout at a time.
 */
function payoutTransaction(kind: 'payout_paid' | 'payout_failure', facts: PayoutFacts, debit: Parameters<typeof debitCredit>[0], credit: Parameters<typeof debitCredit>[1]): LedgerTransaction {
  return ledgerTransaction(
    {
      id: ledgerTransactionId(kind, facts.payoutId),
      kind,
      merchantId: facts.merchantId,
      livemode: facts.livemode,
      orderId: null,
      paymentId: null,
      refundId: null,
      payoutId: facts.payoutId,
      reference: null,
      createdAt: facts.at,
    },
    debitCredit(debit, credit, facts.amount.currency, facts.amount.amount, 'payout'),
  );
}

/** A payout arrived at the merchant's bank: the money in transit has left us (payouts_paid). */
export function payoutPaidPosting(facts: PayoutFacts): LedgerTransaction {
  return payoutTransaction('payout_paid', facts, 'payouts_in_transit', 'payouts_paid');
}

/** A payout the bank refused: the money in transit returns to the merchant's available balance. */
export function payoutFailurePosting(facts: PayoutFacts): LedgerTransaction {
  return payoutTransaction('payout_failure', facts, 'payouts_in_transit', 'merchant_available');
}
