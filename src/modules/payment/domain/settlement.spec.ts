import { describe, expect, it } from 'vitest';
import type { Money } from '../../../kernel/domain/money.ts';
import { computeSettlement, convert } from './settlement.ts';

const money = (amount: bigint, currency: string): Money => ({ amount, currency });

describe('computeSettlement in the order currency', () => {
  it('takes 1.4 % and 0.25 major units: EUR 100.00 settles as 100.00 − 1.40 − 0.25 = 98.35', () => {
    expect(computeSettlement(money(10_000n, 'EUR'), 'EUR')).toEqual(money(9_835n, 'EUR'));
  });

  it.each([
    // gross, 1.4 % exact, rounded percentage fee, net = gross − fee − 25
    [1_000n, '14', 14n, 961n],
    [249n, '3.486', 3n, 221n],
    [250n, '3.5', 4n, 221n], // a half rounds up
    [750n, '10.5', 11n, 714n], // a half rounds up
    [107n, '1.498', 1n, 81n],
    [108n, '1.512', 2n, 81n],
  ])('EUR %i: 1.4 %% is %s, rounded half-up to %i', (gross, _exact, fee, net) => {
    expect(gross - fee - 25n).toBe(net);
    expect(computeSettlement(money(gross, 'EUR'), 'EUR')).toEqual(money(net, 'EUR'));
  });

  it('charges no fixed fee in JPY, where 0.25 yen rounds to 0', () => {
    expect(computeSettlement(money(10_000n, 'JPY'), 'JPY')).toEqual(money(9_860n, 'JPY'));
    expect(computeSettlement(money(250n, 'JPY'), 'JPY')).toEqual(money(246n, 'JPY')); // 3.5 → 4
    expect(computeSettlement(money(1n, 'JPY'), 'JPY')).toEqual(money(1n, 'JPY'));
  });

  it('charges 0.250 KWD (250 fils) in a three-decimal currency', () => {
    expect(computeSettlement(money(10_000n, 'KWD'), 'KWD')).toEqual(money(9_610n, 'KWD'));
  });
});

describe('computeSettlement across currencies', () => {
  it('converts USD to EUR at the reference rate before the fee', () => {
    // USD 100.00 × 0.92 = EUR 92.00 = 9200 cents; 1.4 % of 9200 = 128.8 → 129; 9200 − 129 − 25 = 9046.
    expect(computeSettlement(money(10_000n, 'USD'), 'EUR')).toEqual(money(9_046n, 'EUR'));
    // USD 123.45 × 0.92 = EUR 113.574 → 11357 cents; 1.4 % = 158.998 → 159; 11357 − 159 − 25 = 11173.
    expect(computeSettlement(money(12_345n, 'USD'), 'EUR')).toEqual(money(11_173n, 'EUR'));
  });

  it('rounds the conversion half-up', () => {
    // GBP 0.50 × 1.17 = EUR 0.585 → 59 cents; 1.4 % = 0.826 → 1; 59 − 1 − 25 = 33.
    expect(convert(money(50n, 'GBP'), 'EUR')).toEqual(money(59n, 'EUR'));
    expect(computeSettlement(money(50n, 'GBP'), 'EUR')).toEqual(money(33n, 'EUR'));
  });

  it('converts between exponents: EUR to JPY and JPY to EUR', () => {
    // EUR 100.00 / 0.0061 = 16393.44 yen → 16393; 1.4 % = 229.502 → 230; no fixed fee.
    expect(computeSettlement(money(10_000n, 'EUR'), 'JPY')).toEqual(money(16_163n, 'JPY'));
    // 10000 yen × 0.0061 = EUR 61.00; 1.4 % of 6100 = 85.4 → 85; 6100 − 85 − 25 = 5990.
    expect(computeSettlement(money(10_000n, 'JPY'), 'EUR')).toEqual(money(5_990n, 'EUR'));
  });

  it('settles in the order currency when the order currency has no reference rate', () => {
    expect(computeSettlement(money(10_000n, 'BRL'), 'EUR')).toEqual(money(9_835n, 'BRL'));
    // KRW has exponent 0, so no fixed fee applies either.
    expect(computeSettlement(money(10_000n, 'KRW'), 'EUR')).toEqual(money(9_860n, 'KRW'));
  });

  it('settles in the order currency when the settlement currency has no reference rate', () => {
    expect(computeSettlement(money(10_000n, 'EUR'), 'BRL')).toEqual(money(9_835n, 'EUR'));
  });
});

describe('computeSettlement on tiny amounts', () => {
  it.each([
    [0n, 0n],
    [1n, 0n],
    [24n, 0n],
    [25n, 0n],
    [26n, 1n],
  ])('EUR %i cents settles as %i, never below zero', (gross, net) => {
    expect(computeSettlement(money(gross, 'EUR'), 'EUR')).toEqual(money(net, 'EUR'));
  });

  it('stays at zero when a converted amount is smaller than the fee', () => {
    expect(computeSettlement(money(1n, 'USD'), 'EUR')).toEqual(money(0n, 'EUR'));
    expect(computeSettlement(money(1n, 'JPY'), 'EUR')).toEqual(money(0n, 'EUR'));
  });
});

describe('convert', () => {
  it('returns the same amount for the same currency', () => {
    expect(convert(money(123n, 'EUR'), 'EUR')).toEqual(money(123n, 'EUR'));
  });

  it('is undefined when either side has no reference rate', () => {
    expect(convert(money(100n, 'BRL'), 'EUR')).toBeUndefined();
    expect(convert(money(100n, 'EUR'), 'BRL')).toBeUndefined();
    expect(convert(money(100n, 'EUR'), 'XYZ')).toBeUndefined();
  });
});
