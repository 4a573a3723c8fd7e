/**
 * Every failure the application layer explains to a caller, by stable dotted
 * code: who is calling (authentication), which resource the call names (not
 * found), how lists and idempotency keys are used, request limits. The union
 * is closed and mapped once per edge (src/kernel/application/connect-errors.ts), as
 * the domain's own codes are.
 */
export type ApplicationErrorCode =
  | 'auth.key_missing'
  | 'auth.key_malformed'
  | 'auth.key_invalid'
  | 'auth.secret_key_required'
  | 'auth.too_many_failures'
  | 'checkout.token_invalid'
  | 'checkout.client_secret_invalid'
  | 'order.not_found'
  | 'checkout.not_found'
  | 'checkout.attempt_not_found'
  | 'payment.not_found'
  | 'webhook.endpoint_not_found'
  | 'event.not_found'
  | 'payout.not_found'
  | 'subscription.not_found'
  | 'test_clock.not_found'
  | 'test_clock.busy'
  | 'test_clock.too_many_advancing'
  | 'payout.status_invalid'
  | 'test_helpers.outcome_invalid'
  | 'dispute.not_found'
  | 'payment_link.not_found'
  | 'payment_link.busy'
  | 'customer.not_found'
  | 'vault.card_not_found'
  | 'order.customer_unknown'
  | 'order.card_unknown'
  | 'request.id_unknown'
  | 'request.string_invalid'
  | 'test_helpers.live_mode'
  | 'listen.live_mode'
  | 'list.cursor_invalid'
  | 'list.limit_invalid'
  | 'idempotency.key_invalid'
  | 'idempotency.key_reused'
  | 'rate_limit.exceeded'
  | 'conflict.concurrent_change';

/** An expected failure of a use case that is not a rule of the domain. */
export class ApplicationError extends Error {
  override readonly name = 'ApplicationError';
  readonly code: ApplicationErrorCode;
  /** The request parameter at fault, in the API's snake_case spelling. */
  readonly param: string | undefined;

  constructor(code: ApplicationErrorCode, message: string, param?: string) {
    super(message);
    this.code = code;
    this.param = param;
  }
}
