/**
 * Why a payment attempt failed, in our vocabulary. Each acquirer adapter maps
 * its own response codes onto these with one complete table.
 */
export type DeclineCode =
  | 'insufficient_funds'
  | 'issuer_unavailable'
  | 'expired_card'
  | 'stolen_card'
  | 'do_not_honor'
  | 'authentication_failed'
  | 'authentication_required'
  | 'test_card_unknown'
  | 'test_card_in_live_mode'
  | 'processing_unavailable';

interface DeclineInfo {
  /** A soft decline may succeed on the next route (routing.ts); a hard one is never retried. */
  readonly soft: boolean;
  /** What the customer reads. */
  readonly customerMessage: string;
  /** What the merchant's operator can do about it. */
  readonly operatorMessage: string;
}

/** Every decline code, described once. */
export const DECLINES: { readonly [C in DeclineCode]: DeclineInfo } = {
  insufficient_funds: { soft: true, customerMessage: 'Your card was declined for insufficient funds. Try another card.', operatorMessage: 'The issuer declined for insufficient funds; the customer may retry with another card.' },
  issuer_unavailable: { soft: true, customerMessage: 'Your bank could not be reached. Please try again.', operatorMessage: 'The issuer did not answer; a later retry may succeed.' },
  expired_card: { soft: false, customerMessage: 'Your card has expired. Try another card.', operatorMessage: 'The issuer reports the card as expired; it will not be retried.' },
  stolen_card: { soft: false, customerMessage: 'Your card was declined. Try another card.', operatorMessage: 'The issuer reports the card as stolen; it will not be retried.' },
  do_not_honor: { soft: false, customerMessage: 'Your card was declined. Try another card.', operatorMessage: 'The issuer declined without a reason (do not honor).' },
  authentication_failed: { soft: false, customerMessage: 'The card could not be verified with your bank. Try again or use another card.', operatorMessage: 'The cardholder failed or abandoned 3-D Secure authentication.' },
  authentication_required: { soft: false, customerMessage: 'Your bank asks you to confirm this payment. Pay on the checkout page instead.', operatorMessage: 'An off-session charge (no customer present) met a card whose issuer asks for 3-D Secure; send the customer to the order\'s checkout_url to authenticate.' },
  test_card_unknown: { soft: false, customerMessage: 'This card is not one of this sandbox\'s test cards.', operatorMessage: 'Test mode accepts only the test cards issued with this sandbox; see the sandbox creation output.' },
  test_card_in_live_mode: { soft: false, customerMessage: 'Your card was declined. Use a real card.', operatorMessage: 'A test card was used with a live key; test cards work only in test mode.' },
  processing_unavailable: { soft: false, customerMessage: 'This payment method is not available right now.', operatorMessage: 'No live acquirer route is configured for this method.' },
};
