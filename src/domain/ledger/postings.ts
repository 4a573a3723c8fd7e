import type { Money } from '../money/money.ts';
import type { SettlementBreakdown } from '../payment/settlement.ts';
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
