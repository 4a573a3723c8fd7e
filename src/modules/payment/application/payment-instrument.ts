import type { Card } from '../domain/card.ts';

/**
 * A vaulted card paying: its id (recorded on the attempt) and whether the customer is present. Off
 * session (merchant-initiated, no page), a card whose issuer asks for 3-D Secure declines with
 * authentication_required instead of waiting for a challenge nobody can answer.
 */
export interface SavedCardUse {
  readonly cardId: string;
  readonly offSession: boolean;
}

/** What pays: a card the customer typed or saved, or the (simulated) wallet. */
export type PaymentInstrument = { readonly method: 'card'; readonly card: Card; readonly saved?: SavedCardUse | undefined } | { readonly method: 'wallet' };

/** The query parameter of a redirect's return leg that names the embedded fields' merchant origin (see PaymentClient.fieldsOrigin). */
export const FIELDS_ORIGIN_PARAM = 'fields_origin';

/** Who submitted a payment, as far as the gateway can tell. */
export interface PaymentClient {
  /** The customer's network address (for card-testing limits); undefined when unknown. */
  readonly address: string | undefined;
  /**
   * The merchant page's origin when the payment comes from the embedded card fields (their number
   * frame announces it, checked against the frame's embedder): the return leg of a redirect then
   * carries it, so that the issuer's page and the return leg may be framed by that origin alone.
   */
  readonly fieldsOrigin?: string | undefined;
}
