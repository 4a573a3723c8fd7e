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

/** True when the digits pass the Luhn (mod 10) check. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
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

/** A run of digits, single spaces or dashes allowed between them: where a card number may hide. */
const DIGIT_RUN = /\d(?:[ -]?\d)*/g;

/**
 * Text with every card number in it cut to its last four digits ("••••4242"): 13 to 19 digits that
 * pass the Luhn check, also inside a longer run of digits ("4242… 987", a number and its expiry and
 * CVC typed together). For anything that echoes what a caller sent (an error message, a parameter's
 * name): a number sent where an id belongs must not come back whole.
 */
export function maskCardNumbers(text: string): string {
  return text.replace(DIGIT_RUN, (run) => {
    // Positions of the digits in the run, so that a number found among them is cut in place.
    const at: number[] = [];
    for (let i = 0; i < run.length; i++) if (run[i] !== ' ' && run[i] !== '-') at.push(i);
    if (at.length < 13) return run;
    const digits = at.map((i) => run[i]).join('');
    const hidden = new Array<boolean>(digits.length).fill(false);
    // Where a number may start or end: at the edges of the groups the separators make ("4242… 987" is
    // a 16 and a 3), and, in a group of more than 19 digits, also 13 to 19 digits from either of its
    // edges ("…4242" glued to "1229"). A group of 13 to 19 digits that fails the check is kept whole:
    // it is a number of that length, not a card number with digits around it.
    const edges = new Set<number>([0, digits.length]);
    let count = 0;
    for (let i = 0; i < run.length; i++) {
      if (run[i] === ' ' || run[i] === '-') edges.add(count);
      else count += 1;
    }
    const sorted = [...edges].sort((a, b) => a - b);
    const windows: Array<[number, number]> = [];
    for (const start of sorted) for (const end of sorted) if (end - start >= 13 && end - start <= 19) windows.push([start, end]);
    for (let g = 0; g + 1 < sorted.length; g++) {
      const [from, to] = [sorted[g]!, sorted[g + 1]!];
      if (to - from <= 19) continue;
      for (let length = 19; length >= 13; length--) windows.push([from, from + length], [to - length, to]);
    }
    // Longest first, so that a whole number is found before a shorter valid part of it.
    windows.sort((a, b) => b[1] - b[0] - (a[1] - a[0]));
    for (const [start, end] of windows) {
      if (hidden[start] || !luhnValid(digits.slice(start, end))) continue;
      for (let k = start; k < end - 4; k++) hidden[k] = true;
    }
    if (!hidden.includes(true)) return run;
    let out = '';
    let d = 0;
    for (let i = 0; i < run.length; i++) {
      if (run[i] === ' ' || run[i] === '-') {
        if (!(d > 0 && hidden[d - 1])) out += run[i];
        continue;
      }
      if (hidden[d]) {
        if (d === 0 || !hidden[d - 1]) out += '••••';
      } else {
        out += run[i];
      }
      d += 1;
    }
    return out;
  });
}
