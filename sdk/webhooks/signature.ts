// The signing scheme shared by the verifier, the test-header helper and `checkout listen`:
// HMAC-SHA-256, keyed with the endpoint secret, over "<unix seconds>.<raw body bytes>".
import { createHmac } from 'node:crypto';

/** Name of the HTTP header that carries the signature of a webhook delivery. */
export const SIGNATURE_HEADER = 'Checkout-Signature';

/** The only signature scheme so far; a header may hold several parts of it during a secret rotation. */
export const SIGNATURE_SCHEME = 'v1';

/** Prefix of every webhook endpoint secret. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The raw bytes of a webhook body, as received or as about to be sent. */
export type RawBody = string | Buffer | Uint8Array;

/** The body as bytes; a string is taken as its UTF-8 encoding, which is what travels on the wire. */
export function rawBodyBytes(body: RawBody): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/**
 * Computes the v1 signature of a body: lowercase hex HMAC-SHA-256 keyed with the
 * secret (its full text, `whsec_` prefix included) over `${timestamp}.` followed by the body bytes.
 */
export function computeSignature(secret: string, timestamp: number, body: RawBody): string {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(rawBodyBytes(body)).digest('hex');
}

/**
 * Builds a `Checkout-Signature` value: `t=<timestamp>,v1=<signature>`, with one
 * v1 part per secret (several only while a rotated secret still signs).
 */
export function signatureHeaderValue(body: RawBody, secrets: readonly string[], timestamp: number): string {
  const parts = secrets.map((secret) => `${SIGNATURE_SCHEME}=${computeSignature(secret, timestamp, body)}`);
  return [`t=${timestamp}`, ...parts].join(',');
}
