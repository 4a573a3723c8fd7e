import { describe, expect, it } from 'vitest';
import { disputeLossPosting, disputeReinstatementPosting, disputeWithdrawalPosting } from './postings.ts';

describe('dispute postings', () => {
  const base = {
    disputeId: 'dp_1', paymentId: 'pay_1', orderId: 'ord_1', merchantId: 'mer_1', livemode: false, reference: 'INV-1',
    disputed: { amount: 2_500n, currency: 'USD' }, withdrawn: { amount: 2_300n, currency: 'EUR' }, at: new Date('2026-01-01T00:00:00Z'),
  };
  const rows = (t: { entries: readonly { account: string; currency: string; amount: bigint; purpose: string }[] }) => t.entries.map((e) => [e.account, e.currency, e.amount, e.purpose]);

  it('withdraws the amount into dispute_reserve and the fee into fees_earned, from the balance named', () => {
    const t = disputeWithdrawalPosting({ ...base, fee: { amount: 1_500n, currency: 'EUR' }, from: 'merchant_available' });
    expect(t).toMatchObject({ id: 'ltx_dispute_withdrawal_dp_1', kind: 'dispute_withdrawal', disputeId: 'dp_1', orderId: 'ord_1', reference: 'INV-1' });
    expect(rows(t)).toEqual([
      ['merchant_available', 'EUR', 2_300n, 'dispute'],
      ['dispute_reserve', 'EUR', -2_300n, 'dispute'],
      ['merchant_available', 'EUR', 1_500n, 'dispute_fee'],
      ['fees_earned', 'EUR', -1_500n, 'dispute_fee'],
    ]);
  });

  it('reinstates the amount (not the fee) to the merchant', () => {
    const t = disputeReinstatementPosting({ ...base, to: 'merchant_pending' });
    expect(t.id).toBe('ltx_dispute_reinstatement_dp_1');
    expect(rows(t)).toEqual([
      ['dispute_reserve', 'EUR', 2_300n, 'dispute_reversal'],
      ['merchant_pending', 'EUR', -2_300n, 'dispute_reversal'],
    ]);
  });

  it('pays a loss to acquirer_clearing in the order currency, through currency_conversion', () => {
    expect(rows(disputeLossPosting(base))).toEqual([
      ['dispute_reserve', 'EUR', 2_300n, 'dispute'],
      ['currency_conversion', 'EUR', -2_300n, 'dispute'],
      ['currency_conversion', 'USD', 2_500n, 'conversion'],
      ['acquirer_clearing', 'USD', -2_500n, 'conversion'],
    ]);
    const same = disputeLossPosting({ ...base, withdrawn: { amount: 2_500n, currency: 'USD' } });
    expect(rows(same)).toEqual([
      ['dispute_reserve', 'USD', 2_500n, 'dispute'],
      ['acquirer_clearing', 'USD', -2_500n, 'dispute'],
    ]);
  });
});
