import { TEST_CHALLENGE_CODE, type TestCardBehaviour } from '../../domain/test-card.ts';
import type { Card } from '../../domain/card.ts';
import type { TestCardDirectory } from '../../ports/test-card-directory.port.ts';

/** What the simulated card network answers, before a simulated processor puts it in its own dialect. */
export type IssuerAnswer = 'approve' | 'challenge' | 'authentication_failed' | 'insufficient_funds' | 'expired_card' | 'unknown_test_card';

/**
 * The simulated issuer behind both test routes: it looks the card up among
 * the merchant's sandbox test cards and answers deterministically. The
 * primary route declines the soft-decline card; the alternative approves it
 * (`approvesSoftDecline`).
 */
export async function issuerAnswer(cards: TestCardDirectory, merchantId: string, card: Card | undefined, approvesSoftDecline: boolean): Promise<IssuerAnswer> {
  if (!card) return 'approve'; // the simulated wallet always pays
  const behaviour: TestCardBehaviour | undefined = await cards.behaviourOf(merchantId, card.number);
  switch (behaviour) {
    case undefined:
      return 'unknown_test_card';
    case 'approved':
    case 'dispute': // paid normally; the dispute comes later (the disputes sweeper opens it)
      return 'approve';
    case 'challenge':
      return 'challenge';
    case 'soft_decline':
      return approvesSoftDecline ? 'approve' : 'insufficient_funds';
    case 'hard_decline':
      return 'expired_card';
  }
}

/** The simulated issuer page's check of the challenge code. */
export function challengePassed(code: string): boolean {
  return code.trim() === TEST_CHALLENGE_CODE;
}
