import { describe, expect, it } from 'vitest';
import { ibanFor, ibanValid, VIRTUAL_ACCOUNT_BANK, virtualIbanFor } from './iban.ts';

// Published example IBANs (ECBS / national bank association examples).
const PUBLISHED = [
  'GB82 WEST 1234 5698 7654 32',
  'DE89 3704 0044 0532 0130 00',
  'FR14 2004 1010 0505 0001 3M02 606',
  'NL91 ABNA 0417 1643 00',
  'BE68 5390 0754 7034',
  'NO93 8601 1117 947',
  'CH93 0076 2011 6238 5295 7',
];

describe('ibanValid', () => {
  it.each(PUBLISHED)('accepts %s', (iban) => {
    expect(ibanValid(iban)).toBe(true);
  });

  it('accepts the compact and lowercase forms', () => {
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('gb82 west 1234 5698 7654 32')).toBe(true);
  });

  it.each([
    ['a changed last digit', 'GB82 WEST 1234 5698 7654 33'],
    ['a changed letter', 'GB82 WEST 1234 5698 7654 32'.replace('WEST', 'WESU')],
    ['swapped check digits', 'GB28 WEST 1234 5698 7654 32'],
    ['two swapped adjacent digits', 'DE89 3704 0044 0532 0130 00'.replace('0532', '0523')],
    ['a changed country', 'DE82 WEST 1234 5698 7654 32'],
    ['letters as check digits', 'GBXX WEST 1234 5698 7654 32'],
    ['too short a BBAN', 'GB82 WEST 1'],
    ['punctuation', 'GB82-WEST-1234-5698-7654-32'],
    ['nothing', ''],
  ])('rejects %s', (_label, iban) => {
    expect(ibanValid(iban)).toBe(false);
  });
});

describe('ibanFor', () => {
  it('computes the published check digits', () => {
    expect(ibanFor('GB', 'WEST12345698765432')).toBe('GB82WEST12345698765432');
    expect(ibanFor('DE', '370400440532013000')).toBe('DE89370400440532013000');
    expect(ibanFor('FR', '20041010050500013M02606')).toBe('FR1420041010050500013M02606');
  });

  it('produces valid IBANs, padding single-digit check digits', () => {
    const checks = new Set<string>();
    for (let n = 0; n < 300; n++) {
      const iban = ibanFor('GB', `CHKO${String(n * 7919).padStart(14, '0')}`);
      expect(ibanValid(iban), iban).toBe(true);
      expect(iban).toMatch(/^GB\d{2}CHKO\d{14}$/);
      checks.add(iban.slice(2, 4));
    }
    // Over 300 BBANs the check digits take many values, including 02–09.
    expect([...checks].some((c) => c.startsWith('0'))).toBe(true);
  });
});

describe('virtualIbanFor', () => {
  it('is deterministic per order id', () => {
    expect(virtualIbanFor('ord_abc123')).toBe(virtualIbanFor('ord_abc123'));
  });

  it('differs between order ids, even ids one character apart', () => {
    const ids = ['ord_abc123', 'ord_abc124', 'ord_abc132', 'ord_bbc123', 'ord_', 'ord_Abc123'];
    const ibans = ids.map(virtualIbanFor);
    expect(new Set(ibans).size).toBe(ids.length);
  });

  it('gives a valid 22-character UK IBAN under the CHKO bank code', () => {
    for (let n = 0; n < 200; n++) {
      const iban = virtualIbanFor(`ord_${n.toString(36)}x${n}`);
      expect(ibanValid(iban), iban).toBe(true);
      expect(iban.startsWith('GB')).toBe(true);
      expect(iban).toContain(VIRTUAL_ACCOUNT_BANK.bankCode);
      expect(iban).toMatch(/^GB\d{2}CHKO\d{14}$/);
    }
  });

  it('does not collide across 5000 sequential ids', () => {
    const ibans = new Set(Array.from({ length: 5000 }, (_, n) => virtualIbanFor(`ord_${n}`)));
    expect(ibans.size).toBe(5000);
  });
});
