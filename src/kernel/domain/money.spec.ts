import { describe, expect, it } from 'vitest';
import { DomainError } from './domain-error.ts';
import { findCurrency } from './currency.ts';
import { parseCurrency, parsePositiveAmount } from './money.ts';

describe('currencies', () => {
  it.each([
    ['JPY', 0],
    ['EUR', 2],
    ['USD', 2],
    ['KWD', 3],
    ['CLF', 4],
  ])('%s has exponent %i', (code, exponent) => {
    expect(findCurrency(code)?.exponent).toBe(exponent);
  });

  it('bounds amounts at 999,999,999 major units in each currency', () => {
    expect(findCurrency('JPY')?.maxMinor).toBe(999_999_999n);
    expect(findCurrency('EUR')?.maxMinor).toBe(99_999_999_999n);
    expect(findCurrency('KWD')?.maxMinor).toBe(999_999_999_999n);
  });

  it('rejects lowercase, unknown and retired codes, and suggests the uppercase form', () => {
    expect(() => parseCurrency('eur')).toThrow(/Did you mean "EUR"/);
    for (const code of ['XYZ', 'EU', 'EURO', 'DEM', '']) {
      expect(() => parseCurrency(code)).toThrow(DomainError);
    }
  });
});

describe('amounts', () => {
  const eur = parseCurrency('EUR');
  it('accepts 1 and the currency maximum', () => {
    expect(parsePositiveAmount(1n, eur)).toBe(1n);
    expect(parsePositiveAmount(eur.maxMinor, eur)).toBe(eur.maxMinor);
  });
  it('rejects zero, negatives and one above the maximum with distinct codes', () => {
    const codeOf = (amount: bigint) => {
      try {
        parsePositiveAmount(amount, eur);
        return 'accepted';
      } catch (err) {
        return (err as DomainError).code;
      }
    };
    expect(codeOf(0n)).toBe('money.amount_invalid');
    expect(codeOf(-5n)).toBe('money.amount_invalid');
    expect(codeOf(eur.maxMinor + 1n)).toBe('money.amount_too_large');
  });
});
