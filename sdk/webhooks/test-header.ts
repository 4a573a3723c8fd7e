// Signs a body the way our webhook deliveries are signed, for the merchant's own tests.
import { signatureHeaderValue, WEBHOOK_SECRET_PREFIX, type RawBody } from './signature.ts';

/** Parameters of `generateTestHeader`. */
export interface GenerateTestHeaderParams {
  /** The exact body your test will send (a JSON string, or its bytes). */
  readonly payload: RawBody;
  /** The endpoint secret your receiver verifies with, `whsec_…`; several to mimic a rotation overlap. */
  readonly secret: string | readonly string[];
  /** Unix seconds to sign with; defaults to now. Pass an old one to test the tolerance. */
  readonly timestamp?: number;
}

/**
 * Builds a valid `Checkout-Signature` header value for `payload`, so a test can
 * POST a webhook to the merchant's own receiver without our service.
 *
 * @throws TypeError when the payload is not a string or bytes, a secret does not
 *   start with `whsec_`, or the timestamp is not a whole number of seconds.
 */
export function generateTestHeader(params: GenerateTestHeaderParams): string {
  const { payload, timestamp = Math.floor(Date.now() / 1000) } = params;
  if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) {
    throw new TypeError('payload must be the exact body your test sends, as a string or Buffer: JSON.stringify the event first and send that same string.');
  }
  const secrets = typeof params.secret === 'string' ? [params.secret] : [...params.secret];
  if (secrets.length === 0 || secrets.some((secret) => typeof secret !== 'string' || !secret.startsWith(WEBHOOK_SECRET_PREFIX))) {
    throw new TypeError(`secret must be the endpoint's signing secret, starting with ${WEBHOOK_SECRET_PREFIX}.`);
  }
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TypeError(`timestamp must be whole Unix seconds (e.g. Math.floor(Date.now() / 1000)); got ${String(timestamp)}.`);
  }
  return signatureHeaderValue(payload, secrets, timestamp);
}
