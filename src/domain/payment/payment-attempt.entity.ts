import type { CardBrand } from './card.ts';
import type { DeclineCode } from './decline-code.ts';

/** How the customer paid. */
export type PaymentMethod = 'card' | 'wallet' | 'bank_transfer';

/** Where an attempt stands. */
export type AttemptStatus = 'processing' | 'requires_authentication' | 'succeeded' | 'failed';

/** The cardholder authentication (3-D Secure) result of an attempt. */
export type AuthenticationResult = 'not_required' | 'required' | 'passed' | 'failed' | 'abandoned';

/** One try at paying an order on one route. */
export interface PaymentAttempt {
  readonly id: string;
  readonly orderId: string;
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
  /** The acquirer's reference for the authorization, to complete or capture it. */
  readonly processorRef: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Prefix of attempt ids. */
export const ATTEMPT_ID_PREFIX = 'att_';

/** Most customer submissions one order accepts (card-testing protection). */
export const MAX_ATTEMPTS_PER_ORDER = 10;
