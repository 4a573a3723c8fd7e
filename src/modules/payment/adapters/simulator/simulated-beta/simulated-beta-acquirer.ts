import { TEST_CHALLENGE_CODE } from '../../../domain/test-card.ts';
import { randomUUID } from 'node:crypto';
import type { AuthorizationRequest, AuthorizationResult, PaymentProcessor, SettleResult } from '../../../ports/payment-processor.port.ts';
import type { TestCardDirectory } from '../../../ports/test-card-directory.port.ts';
import { challengePassed, issuerAnswer, type IssuerAnswer } from '../simulated-issuer.ts';
import { BETA_DECLINES, type BetaStatus } from './transformers.ts';

const ANSWER_TO_BETA: { readonly [A in IssuerAnswer]: BetaStatus } = {
  approve: 'AUTHORISED',
  challenge: 'CHALLENGE_REQUIRED',
  insufficient_funds: 'REFUSED_NSF',
  expired_card: 'REFUSED_EXPIRED',
  unknown_test_card: 'UNKNOWN_TEST_PAN',
};

/** The alternative test route: a simulated acquirer that approves what alpha soft-declines. */
export class SimulatedBetaAcquirer implements PaymentProcessor {
  readonly route = 'simulated_beta';
  readonly #cards: TestCardDirectory;

  constructor(cards: TestCardDirectory) {
    this.#cards = cards;
  }

  async authorize(request: AuthorizationRequest): Promise<AuthorizationResult> {
    const status = ANSWER_TO_BETA[await issuerAnswer(this.#cards, request.merchantId, request.card, true)];
    const processorRef = `beta_${randomUUID()}`;
    if (status === 'AUTHORISED') return { kind: 'approved', processorRef };
    if (status === 'CHALLENGE_REQUIRED') return { kind: 'authentication_required', processorRef, testCode: TEST_CHALLENGE_CODE };
    return { kind: 'declined', declineCode: BETA_DECLINES[status] };
  }

  async completeAuthentication(processorRef: string, code: string): Promise<SettleResult> {
    return challengePassed(code) ? { kind: 'approved', processorRef } : { kind: 'declined', declineCode: 'authentication_failed' };
  }

  async capture(processorRef: string): Promise<SettleResult> {
    return { kind: 'approved', processorRef };
  }

  // The simulation keeps no state between calls: releasing, refunding or reversing a payment always succeeds.
  async void(processorRef: string): Promise<SettleResult> {
    return { kind: 'approved', processorRef };
  }

  async refund(captureRef: string): Promise<SettleResult> {
    return { kind: 'approved', processorRef: captureRef };
  }

  async reverse(processorRef: string): Promise<SettleResult> {
    return { kind: 'approved', processorRef };
  }
}
