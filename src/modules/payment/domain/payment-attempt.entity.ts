import type { CardBrand } from './card.ts';
import type { DeclineCode } from './decline-code.ts';

/** How the customer paid. */
export type PaymentMethod = 'card' | 'wallet' | 'bank_transfer';

/**
 * Where an attempt stands. authorized: approved and held for a manual
 * capture (nothing captured yet). canceled: its authorization was released before
 * capture (the order was paid another way or expired, or a manual order's
 * authorization was voided or lapsed). reversal_pending and
 * reversed: it was captured but could not be recorded as the order's payment,
 * so the capture is being, or has been, undone at the acquirer.
 */
export type AttemptStatus = 'processing' | 'requires_authentication' | 'authorized' | 'succeeded' | 'failed' | 'canceled' | 'reversal_pending' | 'reversed';

/**
 * Why a leg was canceled or reversed; order_voided: the merchant voided the order before settlement
 * (or its authorization before capture); authorization_expired: a manual order's authorization was not
 * captured within AUTHORIZATION_VALIDITY_MS.
 */
export type CancellationReason = 'order_paid' | 'order_expired' | 'attempt_abandoned' | 'order_voided' | 'authorization_expired';

/** The cardholder authentication (3-D Secure) result of an attempt. */
export type AuthenticationResult = 'not_required' | 'required' | 'passed' | 'failed' | 'abandoned';

/** One try at paying an order on one route. */
export interface PaymentAttempt {
  readonly id: string;
  /** The payment this attempt is a leg of. */
  readonly paymentId: string;
  readonly orderId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  /** The page's submission id; a retry on the alternative route shares it. */
  readonly submissionId: string | null;
  readonly method: PaymentMethod;
  readonly route: string;
  readonly status: AttemptStatus;
  readonly declineCode: DeclineCode | null;
  readonly authentication: AuthenticationResult;
  readonly cardBrand: CardBrand | null;
  readonly cardLast4: string | null;
  /** True when this attempt retried a soft decline on the alternative route. */
  readonly retry: boolean;
  /** The acquirer's reference for the authorization, to complete, capture, void or reverse it. */
  readonly processorRef: string | null;
  /** Set when the attempt was canceled or reversed. */
  readonly cancellationReason: CancellationReason | null;
  /** Test mode: the code the simulated issuer's challenge accepts, shown (translated) on the page. */
  readonly challengeTestCode: string | null;
  /** Where the customer is sent to authenticate while the attempt waits for its challenge (null otherwise, and for attempts before redirects). */
  readonly challengeRedirect?: ChallengeRedirect | null;
  /** The customer's network address as counted for card-testing limits (an IPv6 address by its /64); null for server-side payments. */
  readonly clientAddress: string | null;
  /** The vaulted card (card_…) this attempt charged; null or absent when the card was typed (or no card). */
  readonly savedCardId?: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/**
 * Where a processor sends the customer's browser to authenticate (3-D Secure): GET navigates to
 * `url`; POST submits a form of `fields` to it. The return leg brings the customer back to us.
 */
export interface ChallengeRedirect {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly fields: Readonly<Record<string, string>>;
}

/** Prefix of attempt ids. */
export const ATTEMPT_ID_PREFIX = 'att_';


