import { Code } from '@connectrpc/connect';
import { cardError, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The payment module's rules a caller can break. */
  interface DomainErrorCodes {
    'checkout.already_paid': true;
    'checkout.expired': true;
    'checkout.attempts_exhausted': true;
    'checkout.payment_in_progress': true;
    'checkout.method_unavailable': true;
    'checkout.velocity_limited': true;
    'card.number_invalid': true;
    'card.expiry_invalid': true;
    'card.cvc_invalid': true;
    'card.name_invalid': true;
    'expire.order_not_open': true;
  }
}

declare module '../../kernel/application/application-error.ts' {
  /** The payment module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'payment.not_found': true;
    'checkout.attempt_not_found': true;
  }
}

/** The payment module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const PAYMENT_ERRORS = {
  'checkout.already_paid': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'order_already_paid' },
  'checkout.expired': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'order_expired' },
  'checkout.attempts_exhausted': { code: Code.ResourceExhausted, type: 'invalid_request_error', publicCode: 'attempts_exhausted' },
  'checkout.payment_in_progress': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'payment_in_progress' },
  'checkout.method_unavailable': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'method_unavailable' },
  'checkout.velocity_limited': { code: Code.ResourceExhausted, type: 'card_error', publicCode: 'too_many_payment_attempts' },
  'card.number_invalid': cardError('card_number_invalid'),
  'card.expiry_invalid': cardError('card_expiry_invalid'),
  'card.cvc_invalid': cardError('card_cvc_invalid'),
  'card.name_invalid': cardError('card_name_invalid'),
  // 409 as the other state refusals: only an open (pending or failed) order can be expired.
  'expire.order_not_open': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_open' },
  'payment.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'checkout.attempt_not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
} satisfies ErrorTable;
