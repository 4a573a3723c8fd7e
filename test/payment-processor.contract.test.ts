import type { Card } from '../src/modules/payment/domain/card.ts';
import { luhnCheckDigit } from '../src/modules/payment/domain/card.ts';
import type { TestCardBehaviour } from '../src/modules/payment/domain/test-card.ts';
import type { TestCardDirectory } from '../src/modules/payment/ports/test-card-directory.port.ts';
import type { SimulatedProcessor } from '../src/modules/payment/adapters/simulator/simulated-processor.ts';
import { SIMULATOR_SIGNATURE_HEADER } from '../src/modules/payment/adapters/simulator/simulated-processor.ts';
import { simulatedAlpha, simulatedBeta } from '../src/modules/payment/adapters/simulator/simulated-routes.ts';
import { ALPHA, BETA, type Dialect } from '../src/modules/payment/adapters/simulator/transformers.ts';
import type { DeclineCode } from '../src/modules/payment/domain/decline-code.ts';
import { paymentProcessorContract, type ContractCard, type ProcessorUnderTest } from './contracts/payment-processor.contract.ts';

const MERCHANT = 'mer_contract';
const withCheckDigit = (partial: string) => partial + luhnCheckDigit(partial);
const NUMBERS: { readonly [K in ContractCard]: string } = {
  approved: withCheckDigit('411111111111100'),
  challenge: withCheckDigit('520000000000100'),
  soft_decline: withCheckDigit('411111111111200'),
  hard_decline: withCheckDigit('411111111111300'),
  unknown: withCheckDigit('411111111111900'),
};
const BEHAVIOUR: ReadonlyMap<string, TestCardBehaviour> = new Map([
  [NUMBERS.approved, 'approved'],
  [NUMBERS.challenge, 'challenge'],
  [NUMBERS.soft_decline, 'soft_decline'],
  [NUMBERS.hard_decline, 'hard_decline'],
]);

/** The sandbox's test cards, in memory (the Postgres directory is covered by the payment suites). */
const cards: TestCardDirectory = {
  behaviourOf: async (merchantId, number) => (merchantId === MERCHANT ? BEHAVIOUR.get(number) : undefined),
  isTestCard: async (number) => BEHAVIOUR.has(number),
};

const cardOf = (kind: ContractCard): Card => ({ number: NUMBERS[kind], brand: kind === 'challenge' ? 'mastercard' : 'visa', last4: NUMBERS[kind].slice(-4), expMonth: 12, expYear: 2040, cvc: '123', name: 'Contract' }) as Card;

function simulator(processor: SimulatedProcessor, dialect: Dialect<string>, softDecline: 'approved' | DeclineCode): ProcessorUnderTest {
  const declined = Object.entries(dialect.codes).flatMap(([code, meaning]) => (meaning.outcome === 'declined' ? [[code, meaning.declineCode] as const] : []));
  const codeOf = (outcome: 'approved' | 'pending') => Object.entries(dialect.codes).find(([, m]) => m.outcome === outcome)![0];
  return {
    name: processor.route,
    processor,
    notifications: processor.notifications,
    merchantId: MERCHANT,
    card: cardOf,
    softDecline,
    // What the browser does: open the issuer page the link names (refused unless signed), type the code, follow the answer's redirect.
    async followRedirect(redirect, answer) {
      const url = new URL(redirect.url);
      const ref = decodeURIComponent(url.pathname.split('/').at(-1)!);
      const page = processor.issuerPage(ref, Object.fromEntries(url.searchParams));
      if (!page) throw new Error('the issuer page refused its own link');
      const back = new URL(processor.answerChallenge(page, answer === 'pass' ? page.testCode : '000000'));
      return Object.fromEntries(back.searchParams);
    },
    notification(event, options = {}) {
      const body = JSON.stringify({ id: event.id, flow: event.flow, processor_ref: event.processorRef, code: event.code, reference: event.reference });
      const signature = processor.signNotification(body, Math.floor(Date.now() / 1000) - (options.signedAgo ?? 0));
      return { headers: { [SIMULATOR_SIGNATURE_HEADER]: signature }, rawBody: Buffer.from(options.tamper ? body.replace(event.id, `${event.id}x`) : body) };
    },
    codes: { approved: codeOf('approved'), pending: codeOf('pending'), declined, unknown: 'ZZ_NEVER_SENT' },
  };
}

paymentProcessorContract(() => simulator(simulatedAlpha(cards), ALPHA, 'insufficient_funds'));
paymentProcessorContract(() => simulator(simulatedBeta(cards), BETA, 'approved'));
