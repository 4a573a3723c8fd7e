// Card checks of the embedded fields: brand, Luhn, expiry and CVC. Pure (no DOM), shared by the field frames.

/** The brands the fields recognise from the leading digits. */
export type Brand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown';

/** What a field reports to the merchant's page: never the value itself. */
export interface FieldState {
  readonly empty: boolean;
  /** The value is complete and valid. */
  readonly complete: boolean;
  /** An error code when the value is wrong (or, after blur, incomplete); '' otherwise. */
  readonly error: FieldErrorCode | '';
}

/** The error codes a field may report. */
export type FieldErrorCode = 'card_number_incomplete' | 'card_number_invalid' | 'card_expiry_incomplete' | 'card_expiry_invalid' | 'card_expiry_past' | 'card_cvc_incomplete' | 'card_cvc_invalid';

/** Every code of {@link FieldErrorCode}, for validating messages. */
export const FIELD_ERROR_CODES: readonly FieldErrorCode[] = ['card_number_incomplete', 'card_number_invalid', 'card_expiry_incomplete', 'card_expiry_invalid', 'card_expiry_past', 'card_cvc_incomplete', 'card_cvc_invalid'];

/** Every brand, for validating messages. */
export const BRANDS: readonly Brand[] = ['visa', 'mastercard', 'amex', 'discover', 'unknown'];

const LENGTHS: Record<Brand, readonly number[]> = {
  visa: [13, 16, 19],
  mastercard: [16],
  amex: [15],
  discover: [16, 17, 18, 19],
  unknown: [12, 13, 14, 15, 16, 17, 18, 19],
};

/** The digits of what was typed, with the spaces and dashes people type removed; '' when anything else is in it. */
export function cardDigits(value: string): string {
  const digits = value.replace(/[\s-]/g, '');
  return /^\d*$/.test(digits) ? digits : '';
}

/** The Luhn checksum of a 12–19 digit number. */
export function luhn(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1 && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** The brand of a number from its leading digits. */
export function detectBrand(number: string): Brand {
  if (/^4/.test(number)) return 'visa';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65)/.test(number)) return 'discover';
  const two = Number(number.slice(0, 2));
  const four = number.length >= 4 ? Number(number.slice(0, 4)) : 0;
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
  return 'unknown';
}

/** Digits of the security code the brand asks for: 4 for American Express, else 3. */
export function cvcLength(brand: Brand): number {
  return brand === 'amex' ? 4 : 3;
}

/** Groups digits as printed on the card: 4-6-5 for American Express, fours otherwise. */
export function groupDigits(number: string): string {
  const sizes = detectBrand(number) === 'amex' ? [4, 6, 5] : [4, 4, 4, 4, 3];
  const parts: string[] = [];
  let at = 0;
  for (const size of sizes) if (at < number.length) parts.push(number.slice(at, (at += size)));
  return parts.join(' ');
}

/** The state of the card number field; `final` (after blur) reports an incomplete number as an error. */
export function numberState(value: string, final: boolean): FieldState {
  const number = cardDigits(value);
  if (!value.trim()) return { empty: true, complete: false, error: '' };
  if (!number) return { empty: false, complete: false, error: 'card_number_invalid' };
  const lengths = LENGTHS[detectBrand(number)];
  const max = Math.max(...lengths);
  if (number.length > max) return { empty: false, complete: false, error: 'card_number_invalid' };
  if (lengths.includes(number.length) && luhn(number)) return { empty: false, complete: true, error: '' };
  // A number at its brand's longest length that fails Luhn is wrong, not unfinished.
  if (number.length === max) return { empty: false, complete: false, error: 'card_number_invalid' };
  return { empty: false, complete: false, error: final ? 'card_number_incomplete' : '' };
}

/** {month, year} of "MM/YY", "MM / YYYY" or "MMYY", or null. */
export function parseExpiry(value: string): { month: number; year: number } | null {
  const m = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(value);
  if (!m) return null;
  const month = Number(m[1]);
  const year = m[2]!.length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  return month >= 1 && month <= 12 ? { month, year } : null;
}

/** The state of the expiry field: cards are valid to the end of their month, and for at most 25 years. */
export function expiryState(value: string, now: Date, final: boolean): FieldState {
  if (!value.trim()) return { empty: true, complete: false, error: '' };
  const exp = parseExpiry(value);
  if (!exp) {
    // Still being typed: "1", "12", "12 /", "12 / 2" or "12 / 203".
    const partial = /^\s*(0|0?[1-9]|1[0-2])\s*(\/\s*\d{0,3}\s*)?$/.test(value) || /^\s*(0[1-9]|1[0-2])\d\s*$/.test(value);
    return { empty: false, complete: false, error: partial && !final ? '' : partial ? 'card_expiry_incomplete' : 'card_expiry_invalid' };
  }
  if (exp.year > now.getFullYear() + 25) return { empty: false, complete: false, error: 'card_expiry_invalid' };
  if (exp.year * 12 + exp.month < now.getFullYear() * 12 + now.getMonth() + 1) return { empty: false, complete: false, error: 'card_expiry_past' };
  return { empty: false, complete: true, error: '' };
}

/** The state of the CVC field for the brand of the number typed beside it. */
export function cvcState(value: string, brand: Brand, final: boolean): FieldState {
  const cvc = value.trim();
  if (!cvc) return { empty: true, complete: false, error: '' };
  const length = cvcLength(brand);
  if (!/^\d+$/.test(cvc) || cvc.length > length) return { empty: false, complete: false, error: 'card_cvc_invalid' };
  if (cvc.length === length) return { empty: false, complete: true, error: '' };
  return { empty: false, complete: false, error: final ? 'card_cvc_incomplete' : '' };
}
