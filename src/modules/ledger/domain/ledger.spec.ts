import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { debitCredit, ledgerTransaction, unbalancedReason } from './ledger.ts';
import { capturePosting } from './postings.ts';
import { settlementBreakdown } from '../../payment/domain/settlement.ts';

const fields = { id: 'ltx_capture_pay_1', kind: 'capture', merchantId: 'mer_1', livemode: false, orderId: 'ord_1', paymentId: 'pay_1', refundId: null, reference: 'r', createdAt: new Date(0) } as const;

describe('the balancing rule', () => {
  it('needs two entries, no zero entry, and equal debits and credits in each currency', () => {
    expect(unbalancedReason(debitCredit('acquirer_clearing', 'merchant_pending', 'EUR', 100n, 'gross'))).toBeUndefined();
    expect(unbalancedReason([{ account: 'merchant_pending', currency: 'EUR', amount: -1n, purpose: 'gross' }])).toMatch(/at least two/);
    expect(unbalancedReason([...debitCredit('acquirer_clearing', 'merchant_pending', 'EUR', 100n, 'gross'), { account: 'fees_earned', currency: 'EUR', amount: 0n, purpose: 'fixed_fee' }])).toMatch(/zero/);
    // Balanced overall but not per currency: 100 EUR against 100 USD is not a posting.
    expect(unbalancedReason([
      { account: 'acquirer_clearing', currency: 'USD', amount: 100n, purpose: 'gross' },
      { account: 'merchant_pending', currency: 'EUR', amount: -100n, purpose: 'gross' },
    ])).toMatch(/differ by 100 in USD/);
  });

  it('drops movements of zero and refuses to build what does not balance', () => {
    const tx = ledgerTransaction(fields, [...debitCredit('acquirer_clearing', 'merchant_pending', 'EUR', 100n, 'gross'), ...debitCredit('merchant_pending', 'fees_earned', 'EUR', 0n, 'fixed_fee')]);
    expect(tx.entries).toHaveLength(2);
    expect(() => ledgerTransaction(fields, [{ account: 'acquirer_clearing', currency: 'EUR', amount: 1n, purpose: 'gross' }, { account: 'merchant_pending', currency: 'EUR', amount: -2n, purpose: 'gross' }])).toThrow(/does not balance/);
  });
});

describe('the capture posting', () => {
  const currencies = ['EUR', 'USD', 'JPY', 'KWD', 'GBP', 'ISK'];
  it('balances in every currency, clears exactly the captured amount, and nets what the order shows as settlement', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 999_999_999_999n }), fc.constantFrom(...currencies), fc.constantFrom(...currencies), (amount, currency, settlementCurrency) => {
        const captured = { amount, currency };
        const settlement = settlementBreakdown(captured, settlementCurrency);
        const tx = capturePosting({ paymentId: 'pay_1', orderId: 'ord_1', merchantId: 'mer_1', livemode: false, reference: 'r', captured, settlement, at: new Date(0) });
        expect(unbalancedReason(tx.entries)).toBeUndefined();
        const sum = (account: string, cur: string) => tx.entries.filter((e) => e.account === account && e.currency === cur).reduce((s, e) => s + e.amount, 0n);
        expect(sum('acquirer_clearing', currency)).toBe(amount);
        expect(-sum('merchant_pending', settlement.net.currency)).toBe(settlement.net.amount);
        expect(-sum('fees_earned', settlement.net.currency)).toBe(settlement.percentageFee + settlement.fixedFee);
        expect(settlement.percentageFee + settlement.fixedFee + settlement.net.amount).toBe(settlement.gross.amount);
        expect(settlement.net.amount >= 0n).toBe(true);
      }),
      { seed: 8, numRuns: 500 },
    );
  });

  it('caps the fees at the gross: a 0.10 EUR capture pays 0.10 of fees and nets zero', () => {
    const settlement = settlementBreakdown({ amount: 10n, currency: 'EUR' }, 'EUR');
    expect(settlement).toMatchObject({ percentageFee: 0n, fixedFee: 10n, net: { amount: 0n, currency: 'EUR' } });
  });
});
