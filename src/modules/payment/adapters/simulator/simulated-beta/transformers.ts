import type { DeclineCode } from '../../../domain/decline-code.ts';

/** Beta answers with status words. */
export type BetaStatus = 'AUTHORISED' | 'REFUSED_NSF' | 'REFUSED_EXPIRED' | 'REFUSED_LOST_STOLEN' | 'ISSUER_TIMEOUT' | 'REFUSED' | 'CHALLENGE_REQUIRED' | 'UNKNOWN_TEST_PAN';

/** Every refusal beta can send, mapped once to ours. */
export const BETA_DECLINES: { readonly [S in Exclude<BetaStatus, 'AUTHORISED' | 'CHALLENGE_REQUIRED'>]: DeclineCode } = {
  REFUSED_NSF: 'insufficient_funds',
  REFUSED_EXPIRED: 'expired_card',
  REFUSED_LOST_STOLEN: 'stolen_card',
  ISSUER_TIMEOUT: 'issuer_unavailable',
  REFUSED: 'do_not_honor',
  UNKNOWN_TEST_PAN: 'test_card_unknown',
};
