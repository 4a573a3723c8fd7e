import { maskCardNumbers } from '../../modules/payment/domain/card.ts';
import { Code, ConnectError } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import { ErrorDetailSchema } from '../../gen/checkout/v1/errors_pb.ts';
import { DomainError, type DomainErrorCode } from '../domain/domain-error.ts';
import { ConflictError, ServiceUnavailableError, UnknownCursorError } from '../ports/errors.ts';
import { ApplicationError, type ApplicationErrorCode } from './application-error.ts';
import { RateLimitedError } from '../../modules/merchant/application/authenticate.ts';
import { LinkStartLimitedError } from '../../modules/payment-link/application/start-link-payment.ts';

/** Error families, as in the REST error body's "type". */
export type ErrorType = 'invalid_request_error' | 'card_error' | 'authentication_error' | 'permission_error' | 'idempotency_error' | 'rate_limit_error' | 'api_error';

interface Mapping {
  readonly code: Code;
  readonly type: ErrorType;
  /** The public, snake_case error code. */
  readonly publicCode: string;
}

const invalidRequest = (publicCode: string): Mapping => ({ code: Code.InvalidArgument, type: 'invalid_request_error', publicCode });
const cardError = (publicCode: string): Mapping => ({ code: Code.InvalidArgument, type: 'card_error', publicCode });
const unauthenticated = (publicCode: string): Mapping => ({ code: Code.Unauthenticated, type: 'authentication_error', publicCode });

/** Every domain error code, mapped once. A code missing here fails the typecheck. */
const DOMAIN_ERRORS: { readonly [K in DomainErrorCode]: Mapping } = {
  'request.parameter_missing': invalidRequest('parameter_missing'),
  'request.parameter_invalid': invalidRequest('parameter_invalid'),
  'money.amount_invalid': invalidRequest('amount_invalid'),
  'money.amount_too_large': invalidRequest('amount_too_large'),
  'money.currency_invalid': invalidRequest('currency_invalid'),
  'order.reference_invalid': invalidRequest('reference_invalid'),
  'order.line_items_invalid': invalidRequest('line_items_invalid'),
  'order.line_items_sum_mismatch': invalidRequest('line_items_sum_mismatch'),
  'order.return_url_invalid': invalidRequest('return_url_invalid'),
  'order.expires_at_invalid': invalidRequest('expires_at_invalid'),
  'order.capture_method_invalid': invalidRequest('capture_method_invalid'),
  'checkout.already_paid': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'order_already_paid' },
  'checkout.expired': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'order_expired' },
  'checkout.attempts_exhausted': { code: Code.ResourceExhausted, type: 'invalid_request_error', publicCode: 'attempts_exhausted' },
  'checkout.payment_in_progress': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'payment_in_progress' },
  'checkout.method_unavailable': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'method_unavailable' },
  'checkout.velocity_limited': { code: Code.ResourceExhausted, type: 'card_error', publicCode: 'too_many_payment_attempts' },
  // A single-use link paid, or being paid, through another of its orders: this payment never started.
  'checkout.link_used': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'payment_link_used' },
  'checkout.link_inactive': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'payment_link_inactive' },
  'card.number_invalid': cardError('card_number_invalid'),
  'card.expiry_invalid': cardError('card_expiry_invalid'),
  'card.cvc_invalid': cardError('card_cvc_invalid'),
  'card.name_invalid': cardError('card_name_invalid'),
  'webhook.url_invalid': invalidRequest('url_invalid'),
  'webhook.url_forbidden': invalidRequest('url_forbidden'),
  'webhook.events_invalid': invalidRequest('enabled_events_invalid'),
  'webhook.default_endpoint': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'default_endpoint_protected' },
  'webhook.overlap_invalid': invalidRequest('overlap_invalid'),
  'webhook.endpoint_limit_reached': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'endpoint_limit_reached' },
  // 409, as for any request the object's state refuses (Stripe answers a refund of an unpaid charge alike).
  'refund.order_not_refundable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_refundable' },
  'refund.exceeds_remaining': invalidRequest('refund_exceeds_remaining'),
  'refund.reason_invalid': invalidRequest('reason_invalid'),
  'refund.note_invalid': invalidRequest('note_invalid'),
  'refund.amount_invalid': invalidRequest('amount_invalid'),
  'void.order_not_voidable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_voidable' },
  'void.order_already_settled': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_already_settled' },
  // 409 as the other state refusals: only an open (pending or failed) order can be expired.
  'expire.order_not_open': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_open' },
  // 409 as the other state refusals; an amount above the authorization is a bad parameter (400), as refund_exceeds_remaining.
  'capture.order_not_capturable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_capturable' },
  'capture.exceeds_authorized': invalidRequest('capture_exceeds_authorized'),
  'capture.declined': { code: Code.FailedPrecondition, type: 'card_error', publicCode: 'capture_declined' },
  'dispute.order_not_disputable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_disputable' },
  'dispute.reason_invalid': invalidRequest('reason_invalid'),
  'dispute.amount_invalid': invalidRequest('amount_invalid'),
  'dispute.exceeds_remaining': invalidRequest('dispute_exceeds_remaining'),
  // 409: the dispute's state refuses the submission, as Stripe answers a closed dispute.
  'dispute.not_submittable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'dispute_not_submittable' },
  'dispute.evidence_past_due': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'dispute_evidence_past_due' },
  'evidence.field_invalid': invalidRequest('evidence_invalid'),
  'subscription.schedule_invalid': invalidRequest('schedule_invalid'),
  'subscription.state_invalid': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'subscription_state_invalid' },
  'test_clock.invalid': invalidRequest('test_clock_invalid'),
  'customer.field_invalid': invalidRequest('parameter_invalid'),
  'customer.metadata_invalid': invalidRequest('metadata_invalid'),
  // The zero-amount verification refused the card: a card error, as a declined payment's.
  'vault.card_declined': cardError('card_declined'),
  'vault.card_limit_reached': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'card_limit_reached' },
  'vault.token_invalid': invalidRequest('token_invalid'),
  'vault.unavailable': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'vault_unavailable' },
};

/** Every application error code, mapped once. A code missing here fails the typecheck. */
const APPLICATION_ERRORS: { readonly [K in ApplicationErrorCode]: Mapping } = {
  'request.string_invalid': invalidRequest('parameter_invalid_string'),
  'request.id_unknown': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'order.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'checkout.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'checkout.token_invalid': { code: Code.PermissionDenied, type: 'permission_error', publicCode: 'checkout_token_invalid' },
  'checkout.client_secret_invalid': unauthenticated('client_secret_invalid'),
  'payment.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'checkout.attempt_not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'test_helpers.live_mode': invalidRequest('test_mode_only'),
  'webhook.endpoint_not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'event.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'payout.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'subscription.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'test_clock.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'test_clock.busy': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'test_clock_advancing' },
  // 429: the merchant's bound on clocks advancing at once; one of them being ready makes room.
  'test_clock.too_many_advancing': { code: Code.ResourceExhausted, type: 'invalid_request_error', publicCode: 'too_many_advancing_test_clocks' },
  'payout.status_invalid': invalidRequest('parameter_invalid'),
  'test_helpers.outcome_invalid': invalidRequest('parameter_invalid'),
  'dispute.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'payment_link.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  // Too many orders started on payment links from one address, or on one link: retry after Retry-After.
  'payment_link.busy': { code: Code.ResourceExhausted, type: 'rate_limit_error', publicCode: 'payment_link_busy' },
  'customer.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'vault.card_not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  // A body naming an unknown customer or card is a bad parameter (400), as Stripe answers it.
  'order.customer_unknown': invalidRequest('resource_missing'),
  'order.card_unknown': invalidRequest('resource_missing'),
  'listen.live_mode': invalidRequest('test_mode_only'),
  'list.cursor_invalid': invalidRequest('starting_after_invalid'),
  'list.limit_invalid': invalidRequest('limit_invalid'),
  'auth.key_missing': unauthenticated('api_key_missing'),
  'auth.key_malformed': unauthenticated('api_key_malformed'),
  'auth.key_invalid': unauthenticated('api_key_invalid'),
  'auth.secret_key_required': { code: Code.PermissionDenied, type: 'permission_error', publicCode: 'secret_key_required' },
  'idempotency.key_invalid': invalidRequest('idempotency_key_invalid'),
  'idempotency.key_reused': { code: Code.FailedPrecondition, type: 'idempotency_error', publicCode: 'idempotency_key_reused' },
  'rate_limit.exceeded': { code: Code.ResourceExhausted, type: 'rate_limit_error', publicCode: 'rate_limit_exceeded' },
  // Its own code: an SDK retries rate_limit_exceeded by itself, but a bad key sent again fails again.
  'auth.too_many_failures': { code: Code.ResourceExhausted, type: 'rate_limit_error', publicCode: 'too_many_authentication_failures' },
  'conflict.concurrent_change': { code: Code.Aborted, type: 'api_error', publicCode: 'concurrent_change' },
};

/** Builds a ConnectError carrying our ErrorDetail. */
export function connectError(message: string, mapping: Mapping, param = '', metadata?: Readonly<Record<string, string>>): ConnectError {
  // A card number sent where an id or a name belongs is echoed by some messages: never whole.
  return new ConnectError(maskCardNumbers(message), mapping.code, metadata, [
    { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { type: mapping.type, code: mapping.publicCode, param: maskCardNumbers(param) }) },
  ]);
}

/**
 * Maps anything a handler threw to the ConnectError a client sees: domain
 * and application errors by their tables, a lost race (ConflictError) as
 * Aborted, an unknown cursor as starting_after_invalid, unreachable stores as
 * Unavailable, and any other fault as Internal with a message that leaks
 * nothing, after onInternal has logged it. Called in one place only: the
 * request guard every service goes through (src/kernel/application/request-guard.ts).
 */
export function toConnectError(err: unknown, onInternal: (err: unknown) => void): ConnectError {
  if (err instanceof RateLimitedError) return connectError(err.message, APPLICATION_ERRORS[err.code], err.param, err.headers);
  if (err instanceof LinkStartLimitedError) return connectError(err.message, APPLICATION_ERRORS[err.code], '', err.headers);
  if (err instanceof ApplicationError) return connectError(err.message, APPLICATION_ERRORS[err.code], err.param);
  if (err instanceof DomainError) return connectError(err.message, DOMAIN_ERRORS[err.code], err.param);
  if (err instanceof UnknownCursorError) return connectError(err.message, APPLICATION_ERRORS['list.cursor_invalid'], 'starting_after');
  if (err instanceof ConflictError) {
    return connectError(`${err.message} Another request changed it at the same time; retry (with the same Idempotency-Key).`, APPLICATION_ERRORS['conflict.concurrent_change']);
  }
  if (err instanceof ServiceUnavailableError) {
    // The caller is told to retry; the operator needs the cause (a database or broker that went away).
    onInternal(err);
    return connectError('The service is temporarily unavailable; retry the request (with the same Idempotency-Key).', {
      code: Code.Unavailable,
      type: 'api_error',
      publicCode: 'service_unavailable',
    });
  }
  if (err instanceof ConnectError) return err;
  onInternal(err);
  return connectError('An internal error occurred; it has been logged.', { code: Code.Internal, type: 'api_error', publicCode: 'internal_error' });
}
