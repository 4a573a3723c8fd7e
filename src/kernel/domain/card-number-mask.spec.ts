import { describe, expect, it } from 'vitest';
import { maskCardNumbers } from './card-number-mask.ts';

describe('maskCardNumbers', () => {
  it('cuts a card number to its last four wherever it stands, grouped or not, and leaves other numbers', () => {
    expect(maskCardNumbers('No such card: "4242424242424242".')).toBe('No such card: "••••4242".');
    expect(maskCardNumbers('card[4242 4242 4242 4242] is not allowed')).toBe('card[••••4242] is not allowed');
    expect(maskCardNumbers('5555-5555-5555-4444')).toBe('••••4444');
    // A number with more digits around it: the expiry and the CVC typed after it, or one glued to it.
    expect(maskCardNumbers('4242424242424242 987')).toBe('••••4242 987');
    expect(maskCardNumbers('card 4242424242424242 12 29')).toBe('card ••••4242 12 29');
    expect(maskCardNumbers('42424242424242421229')).toBe('••••42421229');
    expect(maskCardNumbers('4242424242424242-987')).toBe('••••4242-987');
    expect(maskCardNumbers('1 4242424242424242')).toBe('1 ••••4242');
    expect(maskCardNumbers('4242 4242 4242 4242')).toBe('••••4242');
    // Not Luhn-valid, or too short: an amount, an order count, a timestamp stay as they are.
    expect(maskCardNumbers('amount must be at most 99999999999900 (got 1234567890123)')).toBe('amount must be at most 99999999999900 (got 1234567890123)');
    expect(maskCardNumbers('2026-11-23T06:40:00Z and 424242')).toBe('2026-11-23T06:40:00Z and 424242');
  });
});
