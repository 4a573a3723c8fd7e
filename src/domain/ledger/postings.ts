import type { Money } from '../money/money.ts';
import { convert, type SettlementBreakdown } from '../payment/settlement.ts';
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
  /** The merchant's settlement currency. */
  readonly settlementCurrency: string;
  readonly at: Date;
}

/**
 * A refund: the merchant's balance (merchant_pending) pays it, and we owe it to the acquirer, who
 * returns it to the card (acquirer_clearing). Fees are not returned. In another settlement
 * currency, the amount passes back through currency_conversion at the reference rate.
 */
export function refundPosting(facts: RefundFacts): LedgerTransaction {
  const { refunded } = facts;
  const converted = convert(refunded, facts.settlementCurrency) ?? refunded;
  const entries =
    converted.currency === refunded.currency
      ? debitCredit('merchant_pending', 'acquirer_clearing', refunded.currency, refunded.amount, 'refund')
      : [
          ...debitCredit('merchant_pending', 'currency_conversion', converted.currency, converted.amount, 'refund'),
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
