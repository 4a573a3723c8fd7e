// The errors the server SDK throws: one base class and a small hierarchy chosen in one factory
// (errorFromResponse) from the answer's status and error.type, each carrying the request id.
import type { ErrorBody } from './types.ts';

/** What an error was made of. */
export interface CheckoutErrorInit {
  message: string;
  status?: number;
  type?: string;
  code?: string;
  param?: string;
  requestId?: string;
  /** The parsed error body, when there was one. */
  raw?: unknown;
  cause?: unknown;
}

/** Every error of the server SDK; `instanceof` a subclass to tell them apart. */
export class CheckoutError extends Error {
  /** The HTTP status; undefined when no answer came (ApiConnectionError). */
  readonly status: number | undefined;
  /** error.type of the body: invalid_request_error, card_error, authentication_error, … */
  readonly type: string | undefined;
  /** error.code of the body: stable, meant for programs (amount_invalid, idempotency_key_reused, …). */
  readonly code: string | undefined;
  /** The parameter at fault, in request spelling (amount, line_items[0][amount], Idempotency-Key). */
  readonly param: string | undefined;
  /** The Request-Id of the answer: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  readonly raw: unknown;

  constructor(init: CheckoutErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param;
    this.requestId = init.requestId;
    this.raw = init.raw;
  }
}

/** The request was refused as it stands (400, 404, 409, 422 invalid_request_error): fix it before sending it again. */
export class InvalidRequestError extends CheckoutError {}
/** A card could not be charged or saved (card_error), e.g. card_declined. */
export class CardError extends CheckoutError {}
/** 401: the secret key is missing, malformed or unknown. */
export class AuthenticationError extends CheckoutError {}
/** 403: the key may not do this (a publishable key where a secret key is needed). */
export class PermissionError extends CheckoutError {}
/** idempotency_error: the Idempotency-Key was used before for another request. */
export class IdempotencyError extends CheckoutError {}
/** 429 rate_limit_error: too many requests for this key. */
export class RateLimitError extends CheckoutError {}
/** 5xx, or api_error (concurrent_change): a fault or a race on the service's side; safe to retry with the same key. */
export class ApiError extends CheckoutError {}
/** No answer: the connection failed, was cut, or the attempt timed out. */
export class ApiConnectionError extends CheckoutError {}

const HINTS: Readonly<Record<string, string>> = {
  authentication_error: ' Check that you pass a secret key (sk_test_… or sk_live_…) of this service to new Checkout().',
  permission_error: ' Server calls need the secret key; publishable keys are for browsers and apps.',
  idempotency_error: ' Use a new idempotencyKey for a new request; reuse a key only to retry the same request.',
};

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const error = (body as { error?: unknown }).error;
  return typeof error === 'object' && error !== null && typeof (error as { type?: unknown }).type === 'string';
}

/** The class for an answer's type, then its status when the type is unknown or absent. */
function classFor(status: number, type: string | undefined): typeof CheckoutError {
  switch (type) {
    case 'invalid_request_error':
      return InvalidRequestError;
    case 'card_error':
      return CardError;
    case 'authentication_error':
      return AuthenticationError;
    case 'permission_error':
      return PermissionError;
    case 'idempotency_error':
      return IdempotencyError;
    case 'rate_limit_error':
      return RateLimitError;
    case 'api_error':
      return ApiError;
  }
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ApiError;
  if (status >= 400) return InvalidRequestError;
  return CheckoutError;
}

/**
 * The error an error answer stands for: its class from error.type (or the status when the body is
 * not one of ours, e.g. a proxy's 502), its request id from the body or the Request-Id header.
 */
export function errorFromResponse(status: number, body: unknown, requestIdHeader?: string | null): CheckoutError {
  const requestId = (isErrorBody(body) ? body.error.request_id : undefined) ?? requestIdHeader ?? undefined;
  if (!isErrorBody(body)) {
    const Class = classFor(status, undefined);
    return new Class({ message: `The service answered ${status} without an error body${requestId ? ` (request ${requestId})` : ''}.`, status, requestId, raw: body });
  }
  const { type, code, message, param } = body.error;
  const Class = classFor(status, type);
  return new Class({ message: `${message}${HINTS[type] ?? ''}`, status, type, code, param, requestId, raw: body });
}
