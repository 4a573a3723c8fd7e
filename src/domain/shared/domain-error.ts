/**
 * Every failure the core can explain to a caller, by stable dotted code.
 * The union is closed: the Connect mapping (src/application/connect-errors.ts)
 * must name each code, so a new one cannot go unmapped.
 */
export type DomainErrorCode =
  | 'request.parameter_missing'
  | 'request.parameter_invalid'
  | 'request.string_invalid'
  | 'request.id_unknown'
  | 'money.amount_invalid'
  | 'money.amount_too_large'
  | 'money.currency_invalid'
  | 'order.reference_invalid'
  | 'order.line_items_invalid'
  | 'order.line_items_sum_mismatch'
  | 'order.return_url_invalid'
  | 'order.not_found'
  | 'order.expires_at_invalid'
  | 'checkout.not_found'
  | 'checkout.token_invalid'
  | 'checkout.already_paid'
  | 'checkout.expired'
  | 'checkout.attempts_exhausted'
  | 'checkout.payment_in_progress'
  | 'checkout.method_unavailable'
  | 'checkout.attempt_not_found'
  | 'checkout.velocity_limited'
  | 'card.number_invalid'
  | 'card.expiry_invalid'
  | 'card.cvc_invalid'
  | 'card.name_invalid'
  | 'test_helpers.live_mode'
  | 'webhook.url_invalid'
  | 'webhook.url_forbidden'
  | 'webhook.events_invalid'
  | 'webhook.endpoint_not_found'
  | 'webhook.default_endpoint'
  | 'webhook.overlap_invalid'
  | 'webhook.endpoint_limit_reached'
  | 'event.not_found'
  | 'listen.live_mode'
  | 'list.cursor_invalid'
  | 'list.limit_invalid'
  | 'auth.key_missing'
  | 'auth.key_malformed'
  | 'auth.key_invalid'
  | 'auth.secret_key_required'
  | 'idempotency.key_invalid'
  | 'idempotency.key_reused'
  | 'idempotency.key_in_use'
  | 'rate_limit.exceeded';

/**
 * An expected failure of a use case: bad input, a missing resource, a refused
 * credential. Technical faults (database down) are not DomainErrors.
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
