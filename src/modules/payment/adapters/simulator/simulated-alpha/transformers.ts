import type { DeclineCode } from '../../../domain/decline-code.ts';

/** Alpha speaks ISO 8583 response codes. */
export type AlphaResponseCode = '00' | '51' | '54' | '43' | '91' | '05' | '1A' | 'T1';

/** Every decline code alpha can send, mapped once to ours ('00' approve and '1A' challenge are not declines). */
export const ALPHA_DECLINES: { readonly [C in Exclude<AlphaResponseCode, '00' | '1A'>]: DeclineCode } = {
  '51': 'insufficient_funds',
  '54': 'expired_card',
  '43': 'stolen_card',
  '91': 'issuer_unavailable',
  '05': 'do_not_honor',
  T1: 'test_card_unknown',
};
