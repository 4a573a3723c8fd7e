import { luhnCheckDigit, type CardBrand } from './card.ts';

/** The spec's test paths a sandbox test card can follow. */
export type TestCardBehaviour = 'approved' | 'challenge' | 'soft_decline' | 'hard_decline' | 'dispute';

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
  { behaviour: 'dispute', prefix: '4', brand: 'visa', description: 'Paid normally, then disputed as fraudulent a few seconds later (a chargeback).' },
];

/** How long after its capture a payment with the dispute test card is disputed. */
export const TEST_CARD_DISPUTE_DELAY_MS = 5_000;

/**
 * Makes a sandbox's set of test cards: 16-digit Luhn-valid numbers whose
 * middle digits come from randomDigits(n), so each sandbox has its own. The
 * cards of one sandbox have different last four digits, so that a payment's
 * `card_last4` tells which test card paid it (how the dispute card's payments
 * are found later): on a clash, the last random digit moves on until it is
 * free (it is one of the last four, and at most four of its ten values clash).
 */
export function issueTestCards(randomDigits: (count: number) => string): TestCard[] {
  const lastFours = new Set<string>();
  return TEST_CARD_KINDS.map((kind) => {
    let partial = kind.prefix + randomDigits(15 - kind.prefix.length);
    for (let bump = 0; bump < 10 && lastFours.has((partial + luhnCheckDigit(partial)).slice(-4)); bump++) {
      partial = partial.slice(0, 14) + String((Number(partial[14]) + 1) % 10);
    }
    const number = partial + luhnCheckDigit(partial);
    lastFours.add(number.slice(-4));
    return { number, brand: kind.brand, behaviour: kind.behaviour, description: kind.description };
  });
}

/** The authentication code that passes a simulated challenge. */
export const TEST_CHALLENGE_CODE = '123456';
