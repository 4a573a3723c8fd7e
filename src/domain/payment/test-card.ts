import { luhnCheckDigit, type CardBrand } from './card.ts';

/** The spec's test paths a sandbox test card can follow. */
export type TestCardBehaviour = 'approved' | 'challenge' | 'soft_decline' | 'hard_decline';

/** A sandbox's test card, as handed to the merchant once. */
export interface TestCard {
  readonly number: string;
  readonly brand: CardBrand;
  readonly behaviour: TestCardBehaviour;
  readonly description: string;
}

const TEST_CARD_KINDS: ReadonlyArray<{ behaviour: TestCardBehaviour; prefix: string; brand: CardBrand; description: string }> = [
  { behaviour: 'approved', prefix: '4', brand: 'visa', description: 'Authorizes and captures with no authentication challenge.' },
  { behaviour: 'challenge', prefix: '52', brand: 'mastercard', description: 'Asks for 3-D Secure; code 123456 passes, anything else fails.' },
  { behaviour: 'soft_decline', prefix: '4', brand: 'visa', description: 'Declined for insufficient funds on the primary route, then approved on the alternative route.' },
  { behaviour: 'hard_decline', prefix: '4', brand: 'visa', description: 'Declined as an expired card, with no retry.' },
];

/**
 * Makes a sandbox's set of test cards: 16-digit Luhn-valid numbers whose
 * middle digits come from randomDigits(n), so each sandbox has its own.
 */
export function issueTestCards(randomDigits: (count: number) => string): TestCard[] {
  return TEST_CARD_KINDS.map((kind) => {
    const partial = kind.prefix + randomDigits(15 - kind.prefix.length);
    return { number: partial + luhnCheckDigit(partial), brand: kind.brand, behaviour: kind.behaviour, description: kind.description };
  });
}

/** The authentication code that passes a simulated challenge. */
export const TEST_CHALLENGE_CODE = '123456';
