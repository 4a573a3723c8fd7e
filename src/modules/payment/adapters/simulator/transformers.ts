import type { DeclineCode } from '../../domain/decline-code.ts';
import type { AuthorizationOutcome } from '../../ports/payment-processor.port.ts';
import type { IssuerAnswer } from './simulated-issuer.ts';

/** What one of a dialect's codes means: the whole of what the payment path may learn from it. */
export type CodeMeaning =
  | { readonly outcome: 'approved' }
  | { readonly outcome: 'action' }
  | { readonly outcome: 'pending' }
  | { readonly outcome: 'declined'; readonly declineCode: DeclineCode };

/**
 * A simulated processor's vocabulary: the codes it answers in, each mapped once to ours (the
 * table's type makes a code without a meaning a compile error), and the code it gives each of the
 * simulated issuer's answers.
 */
export interface Dialect<C extends string> {
  /** Prefix of the processor references it hands out ("alpha" → "alpha_…"). */
  readonly prefix: string;
  readonly codes: { readonly [K in C]: CodeMeaning };
  readonly answers: { readonly [A in IssuerAnswer]: C };
}

/** Alpha speaks ISO 8583 response codes (plus 1A/1F for 3-D Secure and T1 for an unknown test card). */
export type AlphaResponseCode = '00' | '09' | '51' | '54' | '43' | '91' | '05' | '1A' | '1F' | 'T1';

/** The primary route's dialect. */
export const ALPHA: Dialect<AlphaResponseCode> = {
  prefix: 'alpha',
  codes: {
    '00': { outcome: 'approved' },
    '09': { outcome: 'pending' }, // "request in progress"
    '1A': { outcome: 'action' }, // "additional customer authentication required"
    '1F': { outcome: 'declined', declineCode: 'authentication_failed' },
    '51': { outcome: 'declined', declineCode: 'insufficient_funds' },
    '54': { outcome: 'declined', declineCode: 'expired_card' },
    '43': { outcome: 'declined', declineCode: 'stolen_card' },
    '91': { outcome: 'declined', declineCode: 'issuer_unavailable' },
    '05': { outcome: 'declined', declineCode: 'do_not_honor' },
    T1: { outcome: 'declined', declineCode: 'test_card_unknown' },
  },
  answers: {
    approve: '00',
    challenge: '1A',
    authentication_failed: '1F',
    insufficient_funds: '51',
    expired_card: '54',
    unknown_test_card: 'T1',
  },
};

/** Beta answers with status words. */
export type BetaStatus =
  | 'AUTHORISED'
  | 'RECEIVED'
  | 'CHALLENGE_REQUIRED'
  | 'AUTHENTICATION_FAILED'
  | 'REFUSED_NSF'
  | 'REFUSED_EXPIRED'
  | 'REFUSED_LOST_STOLEN'
  | 'ISSUER_TIMEOUT'
  | 'REFUSED'
  | 'UNKNOWN_TEST_PAN';

/** The alternative route's dialect. */
export const BETA: Dialect<BetaStatus> = {
  prefix: 'beta',
  codes: {
    AUTHORISED: { outcome: 'approved' },
    RECEIVED: { outcome: 'pending' },
    CHALLENGE_REQUIRED: { outcome: 'action' },
    AUTHENTICATION_FAILED: { outcome: 'declined', declineCode: 'authentication_failed' },
    REFUSED_NSF: { outcome: 'declined', declineCode: 'insufficient_funds' },
    REFUSED_EXPIRED: { outcome: 'declined', declineCode: 'expired_card' },
    REFUSED_LOST_STOLEN: { outcome: 'declined', declineCode: 'stolen_card' },
    ISSUER_TIMEOUT: { outcome: 'declined', declineCode: 'issuer_unavailable' },
    REFUSED: { outcome: 'declined', declineCode: 'do_not_honor' },
    UNKNOWN_TEST_PAN: { outcome: 'declined', declineCode: 'test_card_unknown' },
  },
  answers: {
    approve: 'AUTHORISED',
    challenge: 'CHALLENGE_REQUIRED',
    authentication_failed: 'AUTHENTICATION_FAILED',
    insufficient_funds: 'REFUSED_NSF',
    expired_card: 'REFUSED_EXPIRED',
    unknown_test_card: 'UNKNOWN_TEST_PAN',
  },
};

/** A redirect's details, which only the processor's adapter knows how to build. */
export type ActionOf = (processorRef: string) => Extract<AuthorizationOutcome, { kind: 'action' }>;

/**
 * Reads a code a processor sent. A code missing from the dialect's table (a new one the processor
 * added) is `pending`, never approved: only an explicit answer decides a payment.
 */
export function readCode(codes: Readonly<Record<string, CodeMeaning>>, code: string, processorRef: string, action: ActionOf): AuthorizationOutcome {
  const meaning: CodeMeaning | undefined = Object.hasOwn(codes, code) ? codes[code] : undefined;
  if (!meaning) return { kind: 'pending', processorRef };
  switch (meaning.outcome) {
    case 'approved':
      return { kind: 'approved', processorRef };
    case 'pending':
      return { kind: 'pending', processorRef };
    case 'action':
      return action(processorRef);
    case 'declined':
      return { kind: 'declined', declineCode: meaning.declineCode, processorCode: code, processorRef };
    default: {
      const unmapped: never = meaning;
      throw new Error(`unmapped code meaning ${JSON.stringify(unmapped)}`);
    }
  }
}
