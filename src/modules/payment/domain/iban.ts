/** Remainder of a numeric string modulo 97, computed piecewise (ISO 7064). */
function mod97(digits: string): number {
  let remainder = 0;
  for (const ch of digits) remainder = (remainder * 10 + (ch.charCodeAt(0) - 48)) % 97;
  return remainder;
}

/** Letters as numbers (A=10 … Z=35), as the IBAN check requires. */
function lettersToDigits(text: string): string {
  return [...text].map((ch) => (/[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch)).join('');
}

/** True when an IBAN's check digits are right (mod 97 = 1). */
export function ibanValid(iban: string): boolean {
  const compact = iban.replace(/\s/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(compact)) return false;
  return mod97(lettersToDigits(compact.slice(4) + compact.slice(0, 4))) === 1;
}

/** Builds a valid IBAN from a country code and a BBAN by computing the check digits. */
export function ibanFor(country: string, bban: string): string {
  const check = 98 - mod97(lettersToDigits(`${bban}${country}00`));
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

/** Our virtual-account bank: a UK-format BBAN under bank code CHKO. */
export const VIRTUAL_ACCOUNT_BANK = { country: 'GB', bankCode: 'CHKO', bic: 'CHKOGB2L', holder: 'Hosted Checkout Client Funds' } as const;

/**
 * The virtual IBAN of an order: a deterministic 14-digit sort code and
 * account number derived from the order id (FNV-1a), so a transfer quoting
 * it can be matched back to the order.
 */
export function virtualIbanFor(orderId: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const ch of orderId) hash = ((hash ^ BigInt(ch.charCodeAt(0))) * 0x100000001b3n) & 0xffffffffffffffffn;
  const digits = (hash % 10n ** 14n).toString().padStart(14, '0');
  return ibanFor(VIRTUAL_ACCOUNT_BANK.country, `${VIRTUAL_ACCOUNT_BANK.bankCode}${digits}`);
}
