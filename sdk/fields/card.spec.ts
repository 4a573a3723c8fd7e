// The fields' card checks: brand, Luhn, completeness and the errors a field reports (never the digits).
import { describe, expect, it } from 'vitest';
import { cardDigits, cvcState, detectBrand, expiryState, groupDigits, luhn, numberState, parseExpiry } from './card.ts';

const NOW = new Date(2026, 10, 23);

describe('card number', () => {
  it('detects the brand from the leading digits', () => {
    expect(detectBrand('4242')).toBe('visa');
    expect(detectBrand('5200')).toBe('mastercard');
    expect(detectBrand('2221000000000009')).toBe('mastercard');
    expect(detectBrand('3782')).toBe('amex');
    expect(detectBrand('6011')).toBe('discover');
    expect(detectBrand('9999')).toBe('unknown');
    expect(detectBrand('')).toBe('unknown');
  });

  it('checks Luhn on 12–19 digits only', () => {
    expect(luhn('4242424242424242')).toBe(true);
    expect(luhn('4242424242424241')).toBe(false);
    expect(luhn('42424242')).toBe(false);
  });

  it('is complete only at a length of its brand with a valid checksum', () => {
    expect(numberState('', false)).toEqual({ empty: true, complete: false, error: '' });
    expect(numberState('4242 4242 4242 4242', false)).toEqual({ empty: false, complete: true, error: '' });
    expect(numberState('3782 822463 10005', false)).toEqual({ empty: false, complete: true, error: '' });
    // Still typing: no error until blur.
    expect(numberState('4242 42', false)).toEqual({ empty: false, complete: false, error: '' });
    expect(numberState('4242 42', true)).toEqual({ empty: false, complete: false, error: 'card_number_incomplete' });
    // At the brand's longest length, a bad checksum is wrong at once.
    expect(numberState('5200 0000 0000 0001', false).error).toBe('card_number_invalid');
    expect(numberState('4242 abcd', false).error).toBe('card_number_invalid');
    expect(numberState('4'.repeat(20), false).error).toBe('card_number_invalid');
  });

  it('keeps digits only and groups them as printed', () => {
    expect(cardDigits('4242-4242 4242')).toBe('424242424242');
    expect(cardDigits('4242x')).toBe('');
    expect(groupDigits('4242424242424242')).toBe('4242 4242 4242 4242');
    expect(groupDigits('378282246310005')).toBe('3782 822463 10005');
  });
});

describe('expiry', () => {
  it('reads MM/YY, MM / YYYY and MMYY', () => {
    expect(parseExpiry('12/28')).toEqual({ month: 12, year: 2028 });
    expect(parseExpiry('03 / 2030')).toEqual({ month: 3, year: 2030 });
    expect(parseExpiry('0428')).toEqual({ month: 4, year: 2028 });
    expect(parseExpiry('13/28')).toBeNull();
  });

  it('is valid to the end of its month, for at most 25 years', () => {
    expect(expiryState('11 / 26', NOW, false)).toEqual({ empty: false, complete: true, error: '' });
    expect(expiryState('10 / 26', NOW, false).error).toBe('card_expiry_past');
    expect(expiryState('12 / 2052', NOW, false).error).toBe('card_expiry_invalid');
    expect(expiryState('', NOW, true)).toEqual({ empty: true, complete: false, error: '' });
  });

  it('waits while a date is being typed, and says incomplete after blur', () => {
    for (const partial of ['1', '12', '12 /', '12 / 2', '12 / 203']) {
      expect(expiryState(partial, NOW, false).error, partial).toBe('');
      expect(expiryState(partial, NOW, true).error, partial).toBe('card_expiry_incomplete');
    }
    expect(expiryState('1x', NOW, false).error).toBe('card_expiry_invalid');
    expect(expiryState('19', NOW, false).error).toBe('card_expiry_invalid');
    // Three digits read as M/YY when they can: 130 is January 2030.
    expect(expiryState('130', NOW, false)).toEqual({ empty: false, complete: true, error: '' });
  });
});

describe('CVC', () => {
  it('takes 3 digits, or 4 for American Express', () => {
    expect(cvcState('123', 'visa', false).complete).toBe(true);
    expect(cvcState('123', 'amex', false)).toEqual({ empty: false, complete: false, error: '' });
    expect(cvcState('123', 'amex', true).error).toBe('card_cvc_incomplete');
    expect(cvcState('1234', 'amex', false).complete).toBe(true);
    expect(cvcState('1234', 'visa', false).error).toBe('card_cvc_invalid');
    expect(cvcState('12a', 'visa', false).error).toBe('card_cvc_invalid');
  });
});
