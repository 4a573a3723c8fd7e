import { createHmac } from 'node:crypto';

/** Name of the signature header on every delivery. */
export const SIGNATURE_HEADER = 'Checkout-Signature';

/** Lowercase hex HMAC-SHA-256 of "<t>.<body>" keyed with the secret. */
export function sign(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/**
 * The header value: "t=<unix seconds>,v1=<sig>" with one v1 part per active
 * secret, newest first, so receivers holding either secret verify during a
 * rotation overlap.
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${sign(secret, timestamp, body)}`)].join(',');
}
