import { describe, expect, it } from 'vitest';
import { currencyExponent, fromMinorUnits, toMinorUnits } from './amounts.ts';

describe('Medusa amounts in minor units', () => {
  it('scales by the currency exponent without a float product', () => {
    expect(toMinorUnits(25.99, 'usd')).toBe(2599);
    // 1.005 * 100 is 100.49999999999999 as floats: the decimal text says 100.5, rounded half up.
    expect(toMinorUnits(1.005, 'eur')).toBe(101);
    expect(toMinorUnits('0.29', 'EUR')).toBe(29);
    expect(toMinorUnits(2500, 'jpy')).toBe(2500);
    expect(toMinorUnits('1.2345', 'kwd')).toBe(1235);
    expect(toMinorUnits(10, 'clf')).toBe(100000);
  });

  it('reads Medusa\'s BigNumber, its raw values and bignumber.js', () => {
    expect(toMinorUnits({ value: '12.345', precision: 20 }, 'usd')).toBe(1235);
    expect(toMinorUnits({ raw: { value: '7.1' }, numeric: 7.1 } as never, 'usd')).toBe(710);
    expect(toMinorUnits({ toFixed: () => '3.33' } as never, 'usd')).toBe(333);
  });

  it('reads exponent notation and rounds away what the currency cannot hold', () => {
    expect(toMinorUnits(1e-7, 'usd')).toBe(0);
    expect(toMinorUnits('1.5e2', 'usd')).toBe(15000);
    expect(toMinorUnits('10.994999', 'usd')).toBe(1099);
    expect(toMinorUnits('.5', 'usd')).toBe(50);
  });

  it('refuses negative, non-numeric and unsafe amounts', () => {
    expect(() => toMinorUnits(-1, 'usd')).toThrow(RangeError);
    expect(() => toMinorUnits('abc', 'usd')).toThrow(RangeError);
    expect(() => toMinorUnits('', 'usd')).toThrow(RangeError);
    expect(() => toMinorUnits(Number.NaN, 'usd')).toThrow(TypeError);
    expect(() => toMinorUnits('1e30', 'usd')).toThrow(/too large/);
    expect(() => toMinorUnits(null as never, 'usd')).toThrow(TypeError);
  });

  it('writes minor units back as major-unit decimals', () => {
    expect(fromMinorUnits(2599, 'USD')).toBe('25.99');
    expect(fromMinorUnits(2500, 'EUR')).toBe('25');
    expect(fromMinorUnits(2510, 'EUR')).toBe('25.1');
    expect(fromMinorUnits(5, 'EUR')).toBe('0.05');
    expect(fromMinorUnits(0, 'EUR')).toBe('0');
    expect(fromMinorUnits(2500, 'JPY')).toBe('2500');
    expect(fromMinorUnits(1235, 'KWD')).toBe('1.235');
    expect(() => fromMinorUnits(1.5, 'EUR')).toThrow(RangeError);
    expect(currencyExponent('isk')).toBe(0);
  });
});
