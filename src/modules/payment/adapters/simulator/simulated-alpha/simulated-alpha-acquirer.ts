import { TEST_CHALLENGE_CODE } from '../../../domain/test-card.ts';
import { randomUUID } from 'node:crypto';
import type { AuthorizationRequest, AuthorizationResult, PaymentProcessor, SettleResult } from '../../../ports/payment-processor.port.ts';
import type { TestCardDirectory } from '../../../ports/test-card-directory.port.ts';
import { challengePassed, issuerAnswer, type IssuerAnswer } from '../simulated-issuer.ts';
import { ALPHA_DECLINES, type AlphaResponseCode } from './transformers.ts';

const ANSWER_TO_ALPHA: { readonly [A in IssuerAnswer]: AlphaResponseCode } = {
  approve: '00',
  challenge: '1A',
  insufficient_funds: '51',
  expired_card: '54',
  unknown_test_card: 'T1',
};

/** The primary test route: a simulated acquirer answering in ISO 8583 codes. */
export class SimulatedAlphaAcquirer implements PaymentProcessor {
  readonly route = 'simulated_alpha';
  readonly #cards: TestCardDirectory;

  constructor(cards: TestCardDirectory) {
    this.#cards = cards;
  }

  async authorize(request: AuthorizationRequest): Promise<AuthorizationResult> {
    const code = ANSWER_TO_ALPHA[await issuerAnswer(this.#cards, request.merchantId, request.card, false)];
    const processorRef = `alpha_${randomUUID()}`;
    if (code === '00') return { kind: 'approved', processorRef };
    if (code === '1A') return { kind: 'authentication_required', processorRef, testCode: TEST_CHALLENGE_CODE };
    return { kind: 'declined', declineCode: ALPHA_DECLINES[code] };
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
