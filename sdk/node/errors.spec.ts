import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  CardError,
  CheckoutError,
  errorFromResponse,
  IdempotencyError,
  InvalidRequestError,
  PermissionError,
  RateLimitError,
} from './errors.ts';

const body = (type: string, code: string, extra: Record<string, string> = {}) => ({ error: { type, code, message: `${code} happened.`, request_id: 'req_body', ...extra } });

describe('errorFromResponse', () => {
  it('chooses the class from error.type, then the status', () => {
    const cases: [number, unknown, typeof CheckoutError][] = [
      [400, body('invalid_request_error', 'amount_invalid'), InvalidRequestError],
      [404, body('invalid_request_error', 'resource_missing'), InvalidRequestError],
      [409, body('invalid_request_error', 'order_not_capturable'), InvalidRequestError],
      [422, body('invalid_request_error', 'order_expired'), InvalidRequestError],
      [422, body('card_error', 'capture_declined'), CardError],
      [401, body('authentication_error', 'api_key_invalid'), AuthenticationError],
      [403, body('permission_error', 'secret_key_required'), PermissionError],
      [422, body('idempotency_error', 'idempotency_key_reused'), IdempotencyError],
      [429, body('rate_limit_error', 'rate_limit_exceeded'), RateLimitError],
      [429, body('card_error', 'too_many_payment_attempts'), CardError],
      [409, body('api_error', 'concurrent_change'), ApiError],
      [500, body('api_error', 'internal_error'), ApiError],
      [502, '<html>Bad gateway</html>', ApiError],
      [401, undefined, AuthenticationError],
      [403, undefined, PermissionError],
      [429, undefined, RateLimitError],
      [418, { unexpected: true }, InvalidRequestError],
    ];
    for (const [status, raw, Class] of cases) {
      const error = errorFromResponse(status, raw, 'req_header');
      expect(error, `${status} ${JSON.stringify(raw)}`).toBeInstanceOf(Class);
      expect(error).toBeInstanceOf(CheckoutError);
      expect(error.name).toBe(Class.name);
      expect(error.status).toBe(status);
    }
  });

  it('carries type, code, param and the request id (the body\'s first, else the header\'s)', () => {
    const error = errorFromResponse(400, body('invalid_request_error', 'amount_invalid', { param: 'amount' }), 'req_header');
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'amount_invalid', param: 'amount', requestId: 'req_body', message: 'amount_invalid happened.' });
    expect(errorFromResponse(503, '', 'req_header').requestId).toBe('req_header');
    expect(errorFromResponse(503, '', 'req_header').message).toContain('req_header');
  });

  it('names the likely mistake for keys and idempotency keys', () => {
    expect(errorFromResponse(401, body('authentication_error', 'api_key_invalid')).message).toMatch(/secret key/);
    expect(errorFromResponse(422, body('idempotency_error', 'idempotency_key_reused')).message).toMatch(/new idempotencyKey/);
  });
});
