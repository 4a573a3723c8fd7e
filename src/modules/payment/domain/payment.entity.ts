import type { CardBrand } from './card.ts';
import type { DeclineCode } from './decline-code.ts';
import type { AttemptStatus, AuthenticationResult, CancellationReason, ChallengeRedirect, PaymentAttempt, PaymentMethod } from './payment-attempt.entity.ts';

/** Prefix of payment ids. */
export const PAYMENT_ID_PREFIX = 'pay_';

/** Where a payment stands: the status of its latest leg (see AttemptStatus). */
export type PaymentStatus = AttemptStatus;

/** The money an acquirer took for a payment. */
export interface Capture {
  /** The acquirer's reference of the capture: what a refund or a reversal names. */
  readonly processorRef: string;
  readonly amount: bigint;
  readonly capturedAt: Date;
}

/**
 * One way the customer tried to pay an order: a card or wallet submission
 * (its first leg and the retry of a soft decline on the alternative route), a
 * transfer, later a vaulted card charged off-session. It is what refunds,
 * voids and disputes point at; its attempts are the legs behind it.
 */
export interface Payment {
  /** "pay_" + opaque suffix. */
  readonly id: string;
  readonly orderId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly method: PaymentMethod;
  /** What the payment is for: the order's amount when it began, in minor units. */
  readonly amount: bigint;
  readonly currency: string;
  readonly status: PaymentStatus;
  /** The checkout page's submission id; null for a transfer. */
  readonly submissionId: string | null;
  /** The customer's address as counted for card-testing limits; null for server-side payments. */
  readonly clientAddress: string | null;
  /** Set once captured (and kept when the capture is reversed, as the record of what was undone). */
  readonly capture: Capture | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A payment with the attempts behind it, first leg first. */
export interface PaymentRecord {
  readonly payment: Payment;
  readonly attempts: readonly PaymentAttempt[];
}

/** A change to a payment and the leg it happened on, both at their new state. */
export interface PaymentChange {
  readonly payment: Payment;
  readonly leg: PaymentAttempt;
}

/** What starts a payment. */
export interface NewPayment {
  readonly paymentId: string;
  readonly attemptId: string;
  readonly orderId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly amount: bigint;
  readonly currency: string;
  readonly method: PaymentMethod;
  readonly route: string;
  readonly submissionId: string | null;
  readonly clientAddress: string | null;
  readonly card: { readonly brand: CardBrand; readonly last4: string; readonly savedCardId?: string | undefined } | undefined;
  readonly now: Date;
}

/** A submission's payment, processing on its first route. */
export function startPayment(input: NewPayment): PaymentChange {
  const payment: Payment = {
    id: input.paymentId,
    orderId: input.orderId,
    merchantId: input.merchantId,
    livemode: input.livemode,
    method: input.method,
    amount: input.amount,
    currency: input.currency,
    status: 'processing',
    submissionId: input.submissionId,
    clientAddress: input.clientAddress,
    capture: null,
    createdAt: input.now,
    updatedAt: input.now,
  };
  const leg: PaymentAttempt = {
    id: input.attemptId,
    paymentId: input.paymentId,
    orderId: input.orderId,
    merchantId: input.merchantId,
    livemode: input.livemode,
    submissionId: input.submissionId,
    method: input.method,
    route: input.route,
    status: 'processing',
    declineCode: null,
    authentication: 'not_required',
    cardBrand: input.card?.brand ?? null,
    cardLast4: input.card?.last4 ?? null,
    retry: false,
    processorRef: null,
    cancellationReason: null,
    challengeTestCode: null,
    clientAddress: input.clientAddress,
    savedCardId: input.card?.savedCardId ?? null,
    createdAt: input.now,
    updatedAt: input.now,
  };
  return { payment, leg };
}

/** A transfer that arrived: a payment that succeeded on arrival, with its one leg on the virtual IBAN. */
export function receivedTransfer(input: Omit<NewPayment, 'method' | 'route' | 'submissionId' | 'clientAddress' | 'card'>): PaymentChange {
  const started = startPayment({ ...input, method: 'bank_transfer', route: 'virtual_iban', submissionId: null, clientAddress: null, card: undefined });
  return { payment: { ...started.payment, status: 'succeeded' }, leg: { ...started.leg, status: 'succeeded' } };
}

/** The first leg declined softly: it failed, and the payment goes on as a new leg on the alternative route. */
export function retryOnAlternative(change: PaymentChange, declineCode: DeclineCode, next: { readonly attemptId: string; readonly route: string; readonly now: Date }): PaymentChange & { readonly failedLeg: PaymentAttempt } {
  const failedLeg: PaymentAttempt = { ...change.leg, status: 'failed', declineCode, updatedAt: next.now };
  const leg: PaymentAttempt = { ...change.leg, id: next.attemptId, route: next.route, retry: true, createdAt: next.now, updatedAt: next.now };
  return { payment: { ...change.payment, updatedAt: next.now }, leg, failedLeg };
}

function onLeg(change: PaymentChange, status: PaymentStatus, leg: Partial<PaymentAttempt>, now: Date, payment: Partial<Payment> = {}): PaymentChange {
  return {
    payment: { ...change.payment, ...payment, status, updatedAt: now },
    leg: { ...change.leg, ...leg, status, updatedAt: now },
  };
}

/** The issuer asks the customer to authenticate (3-D Secure): the customer is sent by `redirect` to its page. */
export function requireAuthentication(change: PaymentChange, processorRef: string, redirect: ChallengeRedirect, testCode: string | null, now: Date): PaymentChange {
  return onLeg(change, 'requires_authentication', { authentication: 'required', processorRef, challengeRedirect: redirect, challengeTestCode: testCode }, now);
}

/** An answer to the challenge is being processed: no second answer may run alongside it. */
export function claimChallenge(change: PaymentChange, now: Date): PaymentChange {
  return onLeg(change, 'processing', {}, now);
}

/** The acquirer approved the authorization; its reference is kept before anything is captured. */
export function recordAuthorization(change: PaymentChange, processorRef: string, now: Date): PaymentChange {
  return onLeg(change, 'processing', { processorRef }, now);
}

/** Approved and held for a manual capture: nothing is captured until the merchant asks. */
export function markAuthorized(change: PaymentChange, authentication: AuthenticationResult, now: Date): PaymentChange {
  return onLeg(change, 'authorized', { authentication, declineCode: null }, now);
}

/** Captured (in full, or a manual capture of part of the authorization): the payment succeeded. */
export function markCaptured(change: PaymentChange, capture: Capture, authentication: AuthenticationResult, now: Date): PaymentChange {
  return onLeg(change, 'succeeded', { processorRef: capture.processorRef, authentication, declineCode: null }, now, { capture });
}

/** Declined (or authentication failed): the payment failed. */
export function recordDecline(change: PaymentChange, declineCode: DeclineCode, authentication: AuthenticationResult, now: Date): PaymentChange {
  return onLeg(change, 'failed', { declineCode, authentication }, now);
}

/** A challenge the customer walked away from, superseded by a new submission. */
export function abandonChallenge(change: PaymentChange, now: Date): PaymentChange {
  return onLeg(change, 'failed', { declineCode: 'authentication_failed', authentication: 'abandoned' }, now);
}

/** Released before capture because the order was paid another way or expired. */
export function cancel(change: PaymentChange, reason: CancellationReason, now: Date): PaymentChange {
  return onLeg(change, 'canceled', { cancellationReason: reason }, now);
}

/** Left processing by a process that died before anything reached an acquirer: it failed. */
export function abandonProcessing(change: PaymentChange, now: Date): PaymentChange {
  return onLeg(change, 'failed', { declineCode: 'processing_unavailable' }, now);
}

/**
 * Something an acquirer holds for this payment (an authorization, perhaps a
 * capture) cannot become the order's: it is to be reversed. `processorRef`
 * is what the reversal names (the capture's, when known).
 */
export function holdForReversal(change: PaymentChange, processorRef: string, reason: CancellationReason, authentication: AuthenticationResult, now: Date, capture?: Capture): PaymentChange {
  return onLeg(change, 'reversal_pending', { processorRef, cancellationReason: reason, authentication }, now, capture ? { capture } : {});
}

/** The acquirer undid it: the customer is not charged. */
export function markReversed(change: PaymentChange, now: Date): PaymentChange {
  return onLeg(change, 'reversed', {}, now);
}
