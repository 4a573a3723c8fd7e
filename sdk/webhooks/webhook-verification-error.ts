// The one error the webhook verifier throws, with a closed set of reasons.

/** Why a delivery failed verification; stable codes a receiver can log or branch on. */
export type WebhookVerificationErrorReason =
  /** No signature header value was passed. */
  | 'header_missing'
  /** The header is not `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`. */
  | 'header_malformed'
  /** The body is not a string, Buffer or Uint8Array (typically an already parsed object). */
  | 'body_not_raw'
  /** The secret is missing or does not start with `whsec_`. */
  | 'secret_invalid'
  /** No v1 signature matches the body under the given secret(s). */
  | 'signature_mismatch'
  /** The signed timestamp differs from now by the tolerance or more. */
  | 'timestamp_outside_tolerance'
  /** The signature is valid but the body is not a JSON event envelope. */
  | 'payload_invalid';

/**
 * Thrown by `verifyWebhook` when a delivery must be rejected. The message names
 * the likely mistake; answer the request with a 400 and do not process it.
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  /** Machine-readable reason. */
  readonly reason: WebhookVerificationErrorReason;

  constructor(reason: WebhookVerificationErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}
