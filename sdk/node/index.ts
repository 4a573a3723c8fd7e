// The server SDK: the client, its errors, its pages and the JSON shapes of the API.
export { Checkout } from './checkout.ts';
export { DEFAULT_TIMEOUT_MS, type CheckoutConfig } from './http-client.ts';
export {
  CheckoutError,
  InvalidRequestError,
  CardError,
  AuthenticationError,
  PermissionError,
  IdempotencyError,
  RateLimitError,
  ApiError,
  ApiConnectionError,
  errorFromResponse,
  type CheckoutErrorInit,
} from './errors.ts';
export { Page, type PagePromise } from './pagination.ts';
export { backoffDelay, isRetryable, DEFAULT_MAX_RETRIES, RETRY_BASE_MS, RETRY_CAP_MS } from './retry.ts';
export type * from './types.ts';
