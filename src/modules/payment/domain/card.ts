import { luhnValid } from '../../../kernel/domain/card-number-mask.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';

/** Card brands we recognise from the number's prefix. */
export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown';

/** Card details as typed by the customer, before validation. */
export interface CardInput {
  readonly number: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvc: string;
  readonly name: string;
}

/**
 * A validated card, held in memory for one payment only. Only brand and
 * last4 are ever stored; number and cvc are never logged nor persisted.
 */
export interface Card {
  readonly number: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvc: string;
  readonly name: string;
  readonly brand: CardBrand;
  readonly last4: string;
}

/** The Luhn check digit that completes the given digits. */
export function luhnCheckDigit(partial: string): string {
  for (let d = 0; d <= 9; d++) if (luhnValid(partial + d)) return String(d);
  throw new Error('unreachable: one digit always completes a Luhn sum');
}

/** Brand from the number's prefix (IIN ranges of the major networks). */
export function brandOf(digits: string): CardBrand {
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(digits)) return 'discover';
  return 'unknown';
}

/**
 * Validates typed card details. Messages never repeat the number.
 * @throws DomainError card.number_invalid, card.expiry_invalid, card.cvc_invalid or card.name_invalid
 */
export function parseCard(input: CardInput, now: Date): Card {
  const number = input.number.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(number) || !luhnValid(number)) {
    throw new DomainError('card.number_invalid', 'The card number is not valid; check the digits.', 'card[number]');
  }
  const expYear = input.expYear < 100 ? 2000 + input.expYear : input.expYear;
  const month = now.getUTCFullYear() * 12 + now.getUTCMonth();
  if (!Number.isInteger(input.expMonth) || input.expMonth < 1 || input.expMonth > 12 || expYear * 12 + input.expMonth - 1 < month || expYear > now.getUTCFullYear() + 50) {
    throw new DomainError('card.expiry_invalid', 'The expiry date is not valid or has passed.', 'card[exp_month]');
  }
  const brand = brandOf(number);
  if (!(brand === 'amex' ? /^\d{4}$/ : /^\d{3}$/).test(input.cvc)) {
    throw new DomainError('card.cvc_invalid', `The security code must be ${brand === 'amex' ? 4 : 3} digits.`, 'card[cvc]');
  }
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) {
    throw new DomainError('card.name_invalid', 'Enter the name on the card (at most 100 characters).', 'card[name]');
  }
  return { number, expMonth: input.expMonth, expYear, cvc: input.cvc, name, brand, last4: number.slice(-4) };
}
