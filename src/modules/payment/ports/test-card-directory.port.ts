import type { TestCardBehaviour } from '../domain/test-card.ts';

/** Knows the test cards issued with each sandbox. */
export interface TestCardDirectory {
  /** The behaviour of this number among the merchant's test cards, or undefined. */
  behaviourOf(merchantId: string, cardNumber: string): Promise<TestCardBehaviour | undefined>;
  /** True when the number is a test card of any sandbox. */
  isTestCard(cardNumber: string): Promise<boolean>;
}
