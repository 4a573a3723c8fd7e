import { describe, expect, it } from 'vitest';
import { DomainError, type DomainErrorCode } from '../../../kernel/domain/domain-error.ts';
import { brandOf, luhnCheckDigit, luhnValid, parseCard, type CardInput } from './card.ts';

// Mid-month, mid-year, so "this month" and "last month" are unambiguous in UTC.
const NOW = new Date('2026-06-15T12:00:00Z');

const valid: CardInput = { number: '4242424242424242', expMonth: 12, expYear: 2030, cvc: '123', name: 'Ada Lovelace' };

function codeOf(overrides: Partial<CardInput>): DomainErrorCode | 'accepted' {
  try {
    parseCard({ ...valid, ...overrides }, NOW);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return err.code;
  }
}

describe('luhnValid', () => {
  it.each(['4242424242424242', '4111111111111111', '5555555555554444', '2223003122003222', '378282246310005', '6011111111111117', '79927398713'])(
    'accepts %s',
    (digits) => {
      expect(luhnValid(digits)).toBe(true);
    },
  );

  it.each(['4242424242424241', '4111111111111112', '5555555555554443', '378282246310006', '79927398710', ''])('rejects %j', (digits) => {
    expect(luhnValid(digits)).toBe(false);
  });

  it('catches a swap of two adjacent digits', () => {
    expect(luhnValid('4242424242424224')).toBe(false);
  });
});

describe('luhnCheckDigit', () => {
  it.each([
    ['424242424242424', '2'],
    ['411111111111111', '1'],
    ['555555555555444', '4'],
    ['37828224631000', '5'],
    ['7992739871', '3'],
  ])('completes %s with %s', (partial, digit) => {
    expect(luhnCheckDigit(partial)).toBe(digit);
    expect(luhnValid(partial + digit)).toBe(true);
  });

  it('gives the one digit that completes the sum, for any prefix', () => {
    for (let n = 0; n < 200; n++) {
      const partial = String(1_000_000_007 * n + 12345).padStart(15, '0');
      const check = luhnCheckDigit(partial);
      const completing = [...'0123456789'].filter((d) => luhnValid(partial + d));
      expect(completing).toEqual([check]);
    }
  });
});

describe('brandOf', () => {
  it.each([
    ['4242424242424242', 'visa'],
    ['4000056655665556', 'visa'],
    ['5105105105105100', 'mastercard'],
    ['5555555555554444', 'mastercard'],
    ['5000000000000009', 'unknown'],
    ['5600000000000003', 'unknown'],
    ['2220999999999999', 'unknown'],
    ['2221000000000009', 'mastercard'],
    ['2223003122003222', 'mastercard'],
    ['2299000000000000', 'mastercard'],
    ['2300000000000000', 'mastercard'],
    ['2699000000000000', 'mastercard'],
    ['2700000000000000', 'mastercard'],
    ['2719999999999999', 'mastercard'],
    ['2720999999999999', 'mastercard'],
    ['2721000000000000', 'unknown'],
    ['2800000000000000', 'unknown'],
    ['378282246310005', 'amex'],
    ['341111111111111', 'amex'],
    ['350000000000000', 'unknown'],
    ['6011111111111117', 'discover'],
    ['6500000000000002', 'discover'],
    ['6440000000000000', 'discover'],
    ['6490000000000000', 'discover'],
    ['6430000000000000', 'unknown'],
    ['6012000000000000', 'unknown'],
    ['3530111333300000', 'unknown'],
    ['9999999999999995', 'unknown'],
  ])('%s is %s', (digits, brand) => {
    expect(brandOf(digits)).toBe(brand);
  });
});

describe('parseCard', () => {
  it('returns the normalised card with brand and last4', () => {
    expect(parseCard(valid, NOW)).toEqual({ ...valid, brand: 'visa', last4: '4242' });
  });

  it('strips spaces and dashes from the number', () => {
    const card = parseCard({ ...valid, number: ' 4242-4242 4242\t4242 ' }, NOW);
    expect(card.number).toBe('4242424242424242');
    expect(card.last4).toBe('4242');
  });

  it('trims the name', () => {
    expect(parseCard({ ...valid, name: '  Ada Lovelace \n' }, NOW).name).toBe('Ada Lovelace');
  });

  it.each<[string, Partial<CardInput>, DomainErrorCode]>([
    ['a number failing Luhn', { number: '4242424242424241' }, 'card.number_invalid'],
    ['letters in the number', { number: '4242a24242424242' }, 'card.number_invalid'],
    ['an empty number', { number: '' }, 'card.number_invalid'],
    ['11 digits, though Luhn-valid', { number: '79927398713' }, 'card.number_invalid'],
    ['20 digits, though Luhn-valid', { number: '42424242424242424242'.slice(0, 19) + luhnCheckDigit('4242424242424242424') }, 'card.number_invalid'],
    ['last month', { expMonth: 5, expYear: 2026 }, 'card.expiry_invalid'],
    ['December last year', { expMonth: 12, expYear: 2025 }, 'card.expiry_invalid'],
    ['last month as a 2-digit year', { expMonth: 5, expYear: 26 }, 'card.expiry_invalid'],
    ['month 0', { expMonth: 0, expYear: 2030 }, 'card.expiry_invalid'],
    ['month 13', { expMonth: 13, expYear: 2030 }, 'card.expiry_invalid'],
    ['a fractional month', { expMonth: 6.5, expYear: 2030 }, 'card.expiry_invalid'],
    ['a year more than 50 years ahead', { expMonth: 1, expYear: 2077 }, 'card.expiry_invalid'],
    ['a 4-digit CVC on a visa', { cvc: '1234' }, 'card.cvc_invalid'],
    ['a 2-digit CVC', { cvc: '12' }, 'card.cvc_invalid'],
    ['letters in the CVC', { cvc: '12a' }, 'card.cvc_invalid'],
    ['a 3-digit CVC on an amex', { number: '378282246310005', cvc: '123' }, 'card.cvc_invalid'],
    ['an empty name', { name: '' }, 'card.name_invalid'],
    ['a blank name', { name: '   ' }, 'card.name_invalid'],
    ['a name over 100 characters', { name: 'a'.repeat(101) }, 'card.name_invalid'],
  ])('rejects %s', (_label, overrides, code) => {
    expect(codeOf(overrides)).toBe(code);
  });

  it.each<[string, Partial<CardInput>]>([
    ['the current month', { expMonth: 6, expYear: 2026 }],
    ['the current month as a 2-digit year', { expMonth: 6, expYear: 26 }],
    ['next month', { expMonth: 7, expYear: 2026 }],
    ['a year exactly 50 years ahead', { expMonth: 12, expYear: 2076 }],
    ['a 4-digit CVC on an amex', { number: '3782 822463 10005', cvc: '1234' }],
    ['a 3-digit CVC on a mastercard', { number: '5555555555554444', cvc: '000' }],
    ['a 3-digit CVC on an unknown brand', { number: '3530111333300000', cvc: '999' }],
    ['a name of exactly 100 characters', { name: 'a'.repeat(100) }],
  ])('accepts %s', (_label, overrides) => {
    expect(codeOf(overrides)).toBe('accepted');
  });

  it('tells how many CVC digits the brand needs', () => {
    expect(() => parseCard({ ...valid, number: '378282246310005', cvc: '123' }, NOW)).toThrow('The security code must be 4 digits.');
    expect(() => parseCard({ ...valid, cvc: '1234' }, NOW)).toThrow('The security code must be 3 digits.');
  });

  it('expands a 2-digit year into 20xx', () => {
    expect(parseCard({ ...valid, expYear: 30 }, NOW).expYear).toBe(2030);
  });

  it('reads the current month in UTC', () => {
    // 23:30 on 31 May in New York is already June in UTC.
    const lateMay = new Date('2026-06-01T03:30:00Z');
    expect(() => parseCard({ ...valid, expMonth: 5, expYear: 2026 }, lateMay)).toThrow(expect.objectContaining({ code: 'card.expiry_invalid' }));
    expect(parseCard({ ...valid, expMonth: 6, expYear: 2026 }, lateMay).expMonth).toBe(6);
  });

  it('names the parameter at fault', () => {
    const paramOf = (overrides: Partial<CardInput>) => {
      try {
        parseCard({ ...valid, ...overrides }, NOW);
        return undefined;
      } catch (err) {
        return (err as DomainError).param;
      }
    };
    expect(paramOf({ number: '1' })).toBe('card[number]');
    expect(paramOf({ expMonth: 13 })).toBe('card[exp_month]');
    expect(paramOf({ cvc: '1' })).toBe('card[cvc]');
    expect(paramOf({ name: '' })).toBe('card[name]');
  });

  it('never repeats the card number, nor its last digits, in an error', () => {
    const number = '4000 0566 5566 5556';
    const digits = number.replace(/\s/g, '');
    const failures: Partial<CardInput>[] = [
      { number: '4000 0566 5566 5557' },
      { number, expMonth: 1, expYear: 2020 },
      { number, cvc: '12' },
      { number, name: '' },
    ];
    for (const overrides of failures) {
      let caught: unknown;
      try {
        parseCard({ ...valid, ...overrides }, NOW);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(DomainError);
      const error = caught as DomainError;
      const text = `${error.message} ${error.param ?? ''} ${String(error)} ${JSON.stringify(error)}`;
      expect(text).not.toContain(digits.slice(0, 12));
      expect(text).not.toContain('5556');
      expect(text).not.toContain('5557');
      expect(text).not.toContain('0566');
    }
  });
});

describe('maskCardNumbers', () => {
  it('cuts a card number to its last four wherever it stands, grouped or not, and leaves other numbers', async () => {
    const { maskCardNumbers } = await import('./card.ts');
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
