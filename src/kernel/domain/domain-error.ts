/**
 * Every rule of the domain a caller can break, by stable dotted code (money,
 * orders, payments, cards, webhook endpoints). The application's own codes
 * (authentication, lookups, lists, idempotency, limits) are a union of their
 * own (src/kernel/application/application-error.ts). Both are closed: the Connect
 * mapping (src/kernel/application/connect-errors.ts) must name each code, so a new
 * one cannot go unmapped.
 */
export type DomainErrorCode =
  | 'request.parameter_missing'
  | 'request.parameter_invalid'
  | 'money.amount_invalid'
  | 'money.amount_too_large'
  | 'money.currency_invalid'
  | 'order.reference_invalid'
  | 'order.line_items_invalid'
  | 'order.line_items_sum_mismatch'
  | 'order.return_url_invalid'
  | 'order.expires_at_invalid'
  | 'order.capture_method_invalid'
  | 'checkout.already_paid'
  | 'checkout.expired'
  | 'checkout.attempts_exhausted'
  | 'checkout.payment_in_progress'
  | 'checkout.method_unavailable'
  | 'checkout.velocity_limited'
  | 'checkout.link_used'
  | 'checkout.link_inactive'
  | 'card.number_invalid'
  | 'card.expiry_invalid'
  | 'card.cvc_invalid'
  | 'card.name_invalid'
  | 'webhook.url_invalid'
  | 'webhook.url_forbidden'
  | 'webhook.events_invalid'
  | 'webhook.default_endpoint'
  | 'webhook.overlap_invalid'
  | 'webhook.endpoint_limit_reached'
  | 'refund.order_not_refundable'
  | 'refund.exceeds_remaining'
  | 'refund.reason_invalid'
  | 'refund.note_invalid'
  | 'refund.amount_invalid'
  | 'void.order_not_voidable'
  | 'void.order_already_settled'
  | 'expire.order_not_open'
  | 'capture.order_not_capturable'
  | 'capture.exceeds_authorized'
  | 'capture.declined'
  | 'dispute.order_not_disputable'
  | 'dispute.reason_invalid'
  | 'dispute.amount_invalid'
  | 'dispute.exceeds_remaining'
  | 'dispute.not_submittable'
  | 'dispute.evidence_past_due'
  | 'evidence.field_invalid'
  | 'subscription.schedule_invalid'
  | 'subscription.state_invalid'
  | 'test_clock.invalid'
  | 'customer.field_invalid'
  | 'customer.metadata_invalid'
  | 'vault.card_declined'
  | 'vault.card_limit_reached'
  | 'vault.token_invalid'
  | 'vault.unavailable';

/**
 * A broken rule of the domain: bad input, a state that does not allow the
 * change. Technical faults (database down) are not DomainErrors.
 */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  readonly code: DomainErrorCode;
  /** The request parameter at fault, in the API's snake_case spelling. */
  readonly param: string | undefined;

  constructor(code: DomainErrorCode, message: string, param?: string) {
    super(message);
    this.code = code;
    this.param = param;
  }
}

/** Shorthand for a validation failure on one parameter. */
export function invalid(code: DomainErrorCode, param: string, message: string): DomainError {
  return new DomainError(code, message, param);
}
