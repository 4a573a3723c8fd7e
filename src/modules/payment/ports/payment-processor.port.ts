import type { Card } from '../domain/card.ts';
import type { DeclineCode } from '../domain/decline-code.ts';
import type { ChallengeRedirect, PaymentMethod } from '../domain/payment-attempt.entity.ts';

/**
 * What a processor can do, declared once (Hyperswitch's connector
 * specifications, Medusa's provider options): the payment path asks before it
 * routes, instead of learning from a refusal.
 */
export interface ProcessorCapabilities {
  /** The payment methods it takes. */
  readonly methods: readonly PaymentMethod[];
  /** ISO 4217 codes it takes, upper case; 'any' for no restriction. */
  readonly currencies: readonly string[] | 'any';
  /** Whether an authorization can be held and captured later (capture_method manual). */
  readonly manualCapture: boolean;
  /** Whether a capture may take less than the authorization. */
  readonly partialCapture: boolean;
  /** Whether a refund may return less than the capture (several times, up to it). */
  readonly partialRefund: boolean;
}

/** What a processor is asked to authorize. */
export interface AuthorizationRequest {
  readonly attemptId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly amount: bigint;
  readonly currency: string;
  /** Absent for wallet payments, which carry a wallet token instead (simulated). */
  readonly card: Card | undefined;
  /**
   * Where the customer comes back after a redirect (3-D Secure, a bank's page): our return leg,
   * `/c/<checkout>/return/<attempt>`, reached by GET or POST. Undefined when no customer is
   * present (off-session charges, card verification): a processor then answers without `action`.
   */
  readonly returnUrl: string | undefined;
  /** Our idempotency reference (the attempt's id): a repeated call with it authorizes nothing more. */
  readonly reference: string;
}

/** Where the customer's browser is sent: the processor's (or issuer's) page (GET: navigate; POST: a form of `fields`). */
export type RedirectAction = ChallengeRedirect;

/**
 * A processor's answer to an authorization (or to its completion), already in our vocabulary.
 * Only `approved` and `declined` are final; `pending` (the processor has not decided: Adyen's
 * Received/Pending, Stripe's processing) ends later, by sync or notification.
 */
export type AuthorizationOutcome =
  | { readonly kind: 'approved'; readonly processorRef: string }
  | {
      readonly kind: 'declined';
      readonly declineCode: DeclineCode;
      /** The processor's own code, kept for the operator (never shown to the customer). */
      readonly processorCode: string;
      /** Set when the processor had already opened a payment (e.g. a failed challenge). */
      readonly processorRef?: string | undefined;
    }
  | { readonly kind: 'pending'; readonly processorRef: string }
  | {
      readonly kind: 'action';
      readonly processorRef: string;
      readonly redirect: RedirectAction;
      /**
       * A simulated processor's only: the code its issuer page accepts, which the SDKs and the
       * page show in test mode. A real processor leaves it undefined.
       */
      readonly testCode?: string | undefined;
    };

/** A processor's answer to a capture, refund, void or reversal (or to their sync). */
export type OperationOutcome =
  | { readonly kind: 'succeeded'; readonly processorRef: string }
  | { readonly kind: 'failed'; readonly declineCode: DeclineCode; readonly processorCode: string }
  | { readonly kind: 'pending'; readonly processorRef: string };

/**
 * A payment processor (an acquirer route), the contract every connector fits: authorize, complete
 * an authorization after the customer's redirect, capture and refund in part, void, reverse, sync.
 * Adapters are stateless translators in the manner of Hyperswitch's connectors: one complete table
 * maps their codes to ours, and an answer they cannot read is `pending` (or a thrown error), never
 * success. Every money-moving call carries our reference, so a repeat moves no money twice.
 * Notifications come in through the ProcessorNotifications port.
 */
export interface PaymentProcessor {
  /** The route's name, recorded on every attempt (e.g. "simulated_alpha"). */
  readonly route: string;
  readonly capabilities: ProcessorCapabilities;
  authorize(request: AuthorizationRequest): Promise<AuthorizationOutcome>;
  /**
   * Completes an authorization that answered `action`, from what came back on the return leg (its
   * query or form fields, as given), or from `{ code }` typed into the in-app challenge of the
   * mobile SDK's older flow. The processor verifies them; unverifiable parameters decline.
   */
  completeAuthorization(processorRef: string, returnParams: Readonly<Record<string, string>>): Promise<AuthorizationOutcome>;
  /** Captures all or part of an approved authorization. */
  capture(processorRef: string, amount: bigint, reference: string): Promise<OperationOutcome>;
  /**
   * Refunds all or part of a capture. `reference` (our refund's id) makes a repeated call a no-op
   * at the processor.
   */
  refund(captureRef: string, amount: bigint, reference: string): Promise<OperationOutcome>;
  /** Releases an authorization that was never captured. */
  void(processorRef: string, reference: string): Promise<OperationOutcome>;
  /**
   * Undoes whatever the processor did for this payment: releases it if only authorized, refunds it
   * in full if captured (Adyen's "reversal"). Used when a capture could not be recorded. `reference`
   * (unique per attempt and processor reference) makes a repeated call a no-op at the processor.
   */
  reverse(processorRef: string, amount: bigint, reference: string): Promise<OperationOutcome>;
  /** Where an authorization stands now (Hyperswitch's PSync, Medusa's getPaymentStatus). */
  sync(processorRef: string): Promise<AuthorizationOutcome>;
  /** Where a refund stands now (Hyperswitch's RSync). */
  syncRefund(refundRef: string): Promise<OperationOutcome>;
}
