import { describe, expect, it } from 'vitest';
import { currencyExponent, formatDateTime, formatIban, formatMoney, minorToDecimal } from './format.ts';

/** Intl separates the number and the symbol with a no-break space; tests read better with plain spaces. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

describe('formatMoney', () => {
  it('formats euros the German way', () => {
    expect(plain(formatMoney(123456n, 'EUR', 'de'))).toBe('1.234,56 €');
    expect(plain(formatMoney(123456n, 'EUR', 'de-AT'))).toBe('€ 1.234,56');
  });

  it('formats euros and dollars the English way', () => {
    expect(formatMoney(123456n, 'EUR', 'en')).toBe('€1,234.56');
    expect(formatMoney(5n, 'USD', 'en-US')).toBe('$0.05');
  });

  it('shows yen without decimals: 1234 minor units are ¥1,234', () => {
    expect(formatMoney(1234n, 'JPY', 'en')).toBe('¥1,234');
    expect(plain(formatMoney(1234n, 'JPY', 'de'))).toBe('1.234 ¥');
  });

  it('shows Kuwaiti dinars with three decimals', () => {
    expect(plain(formatMoney(1234n, 'KWD', 'en'))).toBe('KWD 1.234');
    expect(plain(formatMoney(1234567n, 'KWD', 'de'))).toBe('1.234,567 KWD');
  });

  it('keeps every digit of amounts beyond floating-point precision', () => {
    expect(formatMoney(99999999999999999n, 'EUR', 'en')).toBe('€999,999,999,999,999.99');
  });

  it('still shows an amount in an unknown or malformed currency', () => {
    expect(formatMoney(1234n, 'XYZ', 'en')).toMatch(/12\.34/);
    expect(formatMoney(1234n, 'not a code', 'en')).toBe('12.34 not a code');
  });
});

describe('minorToDecimal and currencyExponent', () => {
  it('places the decimal point by the exponent, padding small amounts', () => {
    expect(minorToDecimal(5n, 2)).toBe('0.05');
    expect(minorToDecimal(5n, 3)).toBe('0.005');
    expect(minorToDecimal(1234n, 0)).toBe('1234');
    expect(minorToDecimal(-150n, 2)).toBe('-1.50');
  });

  it('reads exponents from the ISO 4217 table', () => {
    expect([currencyExponent('EUR'), currencyExponent('JPY'), currencyExponent('KWD'), currencyExponent('CLF')]).toEqual([2, 0, 3, 4]);
  });
});

describe('formatDateTime', () => {
  it('writes a long date in the locale, in UTC', () => {
    const date = new Date('2026-03-05T14:07:00Z');
    expect(plain(formatDateTime(date, 'de'))).toBe('5. März 2026 um 14:07 UTC');
    expect(plain(formatDateTime(date, 'en-GB'))).toBe('5 March 2026 at 14:07 UTC');
  });
});

describe('formatIban', () => {
  it('groups by four, whatever spacing it came with', () => {
    expect(formatIban('DE89370400440532013000')).toBe('DE89 3704 0044 0532 0130 00');
    expect(formatIban('de89 3704 0044 0532 0130 00')).toBe('DE89 3704 0044 0532 0130 00');
  });
});
