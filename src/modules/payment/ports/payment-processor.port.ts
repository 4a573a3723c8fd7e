import type { Card } from '../domain/card.ts';
import type { DeclineCode } from '../domain/decline-code.ts';

/** What an acquirer is asked to authorize. */
export interface AuthorizationRequest {
  readonly attemptId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly amount: bigint;
  readonly currency: string;
  /** Absent for wallet payments, which carry a wallet token instead (simulated). */
  readonly card: Card | undefined;
}

/** An acquirer's answer, already in our vocabulary. */
export type AuthorizationResult =
  | { readonly kind: 'approved'; readonly processorRef: string }
  | {
      readonly kind: 'authentication_required';
      readonly processorRef: string;
      /** Test mode: the code the simulated issuer accepts; the page shows it in the customer's language. */
      readonly testCode: string | undefined;
    }
  | { readonly kind: 'declined'; readonly declineCode: DeclineCode };

/** The result of a capture or of completing authentication. */
export type SettleResult = { readonly kind: 'approved'; readonly processorRef: string } | { readonly kind: 'declined'; readonly declineCode: DeclineCode };

/**
 * An acquirer route: authorize (and complete the issuer's authentication),
 * capture, void an authorization, refund a capture, or reverse whatever it
 * did. Adapters translate their own response codes into our DeclineCode with
 * one complete mapping.
 */
export interface PaymentProcessor {
  /** The route's name, recorded on every attempt (e.g. "simulated_alpha"). */
  readonly route: string;
  authorize(request: AuthorizationRequest): Promise<AuthorizationResult>;
  /** Completes cardholder authentication with the code the customer typed. */
  completeAuthentication(processorRef: string, code: string): Promise<SettleResult>;
  /** Captures an approved authorization in full. */
  capture(processorRef: string, amount: bigint): Promise<SettleResult>;
  /**
   * Releases an authorization that was never captured (a challenge canceled
   * because the order was paid another way or expired).
   */
  void(processorRef: string): Promise<SettleResult>;
  /**
   * Refunds all or part of a capture (refunds of paid orders). `reference`
   * (our refund's id) makes a repeated call a no-op at the acquirer.
   */
  refund(captureRef: string, amount: bigint, reference: string): Promise<SettleResult>;
  /**
   * Undoes whatever the acquirer did for this payment: releases it if only
   * authorized, refunds it in full if captured (Adyen's "reversal"). Used when
   * a capture could not be recorded. `reference` (unique per attempt and
   * processor reference) makes a repeated call a no-op at the acquirer.
   */
  reverse(processorRef: string, amount: bigint, reference: string): Promise<SettleResult>;
}
