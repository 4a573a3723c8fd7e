// Verifies a webhook delivery the way stripe-node's constructEvent does: raw body, signature
// compared in constant time against every v1 part, timestamp within a tolerance, then parse.
import { timingSafeEqual } from 'node:crypto';
import { computeSignature, rawBodyBytes, SIGNATURE_HEADER, SIGNATURE_SCHEME, WEBHOOK_SECRET_PREFIX, type RawBody } from './signature.ts';
import type { WebhookEvent } from './webhook-event.ts';
import { WebhookVerificationError } from './webhook-verification-error.ts';

/** The reference verifier's replay window: five minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Options of `verifyWebhook`. */
export interface VerifyWebhookOptions {
  /**
   * Reject a delivery whose signed timestamp differs from now by this many
   * seconds or more. Default 300.
   */
  readonly toleranceSeconds?: number;
  /** The current time in milliseconds since the epoch, like `Date.now` (the default). For tests. */
  readonly now?: () => number;
}

/** The parts of a `Checkout-Signature` header value. */
interface ParsedSignatureHeader {
  readonly timestamp: number;
  readonly signatures: readonly string[];
}

// Before 2001-09-09 in milliseconds: a `now` this small almost surely returns seconds.
const IMPLAUSIBLE_NOW_MS = 1e12;

/**
 * Verifies a webhook delivery and returns its event.
 *
 * Pass the request body exactly as received (the raw bytes, before any JSON
 * parsing), the `Checkout-Signature` header value and the endpoint's secret.
 * During a secret rotation pass both secrets (`[newSecret, oldSecret]`): a
 * header matching any of them is accepted, and so is any of the header's v1
 * parts. Signatures are compared in constant time.
 *
 * @throws WebhookVerificationError when the delivery must be rejected; its
 *   `reason` says why and its message names the likely mistake.
 * @throws RangeError when `options.toleranceSeconds` is not a positive number.
 */
export function verifyWebhook(
  rawBody: RawBody,
  header: string | null | undefined,
  secret: string | string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof toleranceSeconds !== 'number' || !(toleranceSeconds > 0)) {
    throw new RangeError(`toleranceSeconds must be a positive number of seconds (the default is ${DEFAULT_TOLERANCE_SECONDS}); got ${String(toleranceSeconds)}.`);
  }
  // Mistakes in the receiver's own code and configuration come first: they fail every delivery, whatever the request.
  const body = checkRawBody(rawBody);
  const secrets = checkSecrets(secret);
  const parsed = parseSignatureHeader(header);

  const matches = secrets.some((candidateSecret) => {
    const expected = computeSignature(candidateSecret, parsed.timestamp, body);
    return parsed.signatures.some((signature) => constantTimeEqual(expected, signature));
  });
  if (!matches) throw mismatchError(body, secrets.length);

  const nowMs = (options.now ?? Date.now)();
  const skew = Math.floor(nowMs / 1000) - parsed.timestamp;
  if (Math.abs(skew) >= toleranceSeconds) throw toleranceError(skew, toleranceSeconds, nowMs);

  return parseEvent(body);
}

/** Compares two signatures without leaking where they differ; different lengths are simply unequal. */
function constantTimeEqual(expected: string, received: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(received, 'utf8');
  // timingSafeEqual throws on unequal lengths; the length of a signature is no secret.
  return a.length === b.length && timingSafeEqual(a, b);
}

function checkRawBody(rawBody: unknown): Buffer {
  if (typeof rawBody === 'string') {
    if (/^\[object \w+\]$/.test(rawBody)) {
      throw new WebhookVerificationError(
        'body_not_raw',
        `The webhook body is the string "${rawBody}": an object was converted to text somewhere. Pass the raw body bytes, not the parsed JSON: with Express use express.raw({type: 'application/json'}) on the webhook route.`,
      );
    }
    return rawBodyBytes(rawBody);
  }
  if (rawBody instanceof Uint8Array) return rawBodyBytes(rawBody);
  if (rawBody === undefined || rawBody === null) {
    throw new WebhookVerificationError(
      'body_not_raw',
      `The webhook body is ${String(rawBody)}. Pass the raw body bytes as a string or Buffer: with Express use express.raw({type: 'application/json'}) on the webhook route (a JSON parser that ran first may have consumed the body).`,
    );
  }
  if (rawBody instanceof ArrayBuffer) {
    throw new WebhookVerificationError('body_not_raw', 'The webhook body is an ArrayBuffer; pass Buffer.from(body) (the raw body bytes) instead.');
  }
  const what = typeof rawBody === 'object' ? 'a parsed JavaScript object' : `a ${typeof rawBody}`;
  throw new WebhookVerificationError(
    'body_not_raw',
    `The webhook body must be the raw request body as a string or Buffer, but ${what} was passed; the signature covers the exact bytes sent, which parsing loses. Pass the raw body bytes, not the parsed JSON: with Express use express.raw({type: 'application/json'}) on the webhook route, with Fastify a content-type parser with parseAs: 'buffer'.`,
  );
}

function checkSecrets(secret: unknown): string[] {
  const secrets = Array.isArray(secret) ? (secret as unknown[]) : [secret];
  if (secrets.length === 0) {
    throw new WebhookVerificationError('secret_invalid', 'No webhook secret was passed (an empty array). Pass the endpoint\'s signing secret, whsec_…');
  }
  for (const candidate of secrets) {
    if (typeof candidate !== 'string' || candidate === '') {
      throw new WebhookVerificationError(
        'secret_invalid',
        `The webhook secret is ${candidate === '' ? 'an empty string' : String(candidate)}. Is the environment variable that holds it set in this process? Pass the endpoint's signing secret, whsec_…`,
      );
    }
    if (candidate === WEBHOOK_SECRET_PREFIX) {
      // Anyone can sign with the key "whsec_": typically `whsec_${SOMETHING}` with SOMETHING unset.
      throw new WebhookVerificationError(
        'secret_invalid',
        `The webhook secret is just "${WEBHOOK_SECRET_PREFIX}", with nothing after it. Is the variable it is built from set in this process? Pass the endpoint's whole signing secret.`,
      );
    }
    if (!candidate.startsWith(WEBHOOK_SECRET_PREFIX)) {
      // Show only the prefix: the value may be a real key.
      const looksLikeApiKey = /^(sk|pk|rk)_(test|live)_/.exec(candidate);
      const hint = looksLikeApiKey ? ` It looks like an API key (${looksLikeApiKey[0]}…), not a webhook secret.` : '';
      throw new WebhookVerificationError(
        'secret_invalid',
        `The webhook secret must start with ${WEBHOOK_SECRET_PREFIX}.${hint} Use the signing secret of this endpoint, shown when the endpoint was created or its secret rotated (and by \`checkout listen\`).`,
      );
    }
  }
  return secrets as string[];
}

function parseSignatureHeader(header: unknown): ParsedSignatureHeader {
  if (header === undefined || header === null || (typeof header === 'string' && header.trim() === '')) {
    throw new WebhookVerificationError(
      'header_missing',
      `No ${SIGNATURE_HEADER} header value was passed. Read it from the request (in Node: req.headers['checkout-signature'], header names are lowercased). A request without it did not come from us, or a proxy dropped the header.`,
    );
  }
  if (typeof header !== 'string') {
    throw new WebhookVerificationError(
      'header_malformed',
      `The ${SIGNATURE_HEADER} header value must be a string, got ${Array.isArray(header) ? 'an array (the header was sent more than once?)' : typeof header}.`,
    );
  }
  let timestamp: number | undefined;
  let timestampParts = 0;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return malformedHeader(header);
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't') {
      timestampParts += 1;
      if (!/^\d{1,12}$/.test(value)) return malformedHeader(header);
      timestamp = Number(value);
    } else if (name === SIGNATURE_SCHEME) {
      if (value !== '') signatures.push(value);
    }
    // Other schemes (a future v2) are ignored, so a new scheme can be added without breaking this verifier.
  }
  if (timestamp === undefined || timestampParts !== 1 || signatures.length === 0) return malformedHeader(header);
  return { timestamp, signatures };
}

function malformedHeader(header: string): never {
  const shown = header.length > 120 ? `${header.slice(0, 120)}…` : header;
  throw new WebhookVerificationError(
    'header_malformed',
    `The ${SIGNATURE_HEADER} header is malformed: expected "t=<unix seconds>,v1=<hex signature>" (possibly with more v1 parts), got "${shown}". Pass the header value exactly as received.`,
  );
}

function mismatchError(body: Buffer, secretCount: number): WebhookVerificationError {
  const secretHint = `Check you use the secret of this endpoint, whsec_…; test and live secrets differ, and each endpoint has its own${secretCount > 1 ? '' : ' (after a rotation, pass the old and new secret as an array until the overlap ends)'}.`;
  const reformatted = looksReserialized(body);
  const message = reformatted
    ? `No v1 signature in the ${SIGNATURE_HEADER} header matches the body, and the body looks re-serialized (${reformatted}). Pass the raw body bytes, not the parsed JSON or JSON.stringify of it: with Express use express.raw({type: 'application/json'}) on the webhook route. If the body is raw, then: ${secretHint}`
    : `No v1 signature in the ${SIGNATURE_HEADER} header matches the body. ${secretHint} Also make sure you pass the raw body bytes exactly as received.`;
  return new WebhookVerificationError('signature_mismatch', message);
}

/**
 * Best effort: we send compact JSON, so a body that is JSON yet differs from its own compact
 * form (indentation, spaces after colons) was most likely parsed and stringified again.
 */
function looksReserialized(body: Buffer): string | undefined {
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (/\n\s/.test(text)) return 'it is indented JSON, like JSON.stringify(body, null, 2)';
  if (JSON.stringify(value) !== text) return 'its whitespace differs from the compact JSON we send';
  return undefined;
}

function toleranceError(skew: number, toleranceSeconds: number, nowMs: number): WebhookVerificationError {
  const direction = skew > 0 ? 'in the past' : 'in the future';
  const unitHint = nowMs < IMPLAUSIBLE_NOW_MS ? ' options.now must return milliseconds, like Date.now(); it seems to return seconds.' : '';
  return new WebhookVerificationError(
    'timestamp_outside_tolerance',
    `The signature's timestamp is ${Math.abs(skew)} s ${direction}, which is not within the tolerance of ${toleranceSeconds} s.${unitHint} A replayed old delivery is rightly rejected; if fresh deliveries fail like this, check this server's clock for skew (is NTP running?).`,
  );
}

function parseEvent(body: Buffer): WebhookEvent {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('payload_invalid', 'The signature is valid but the body is not JSON; this should not happen with our deliveries.');
  }
  const event = value as Partial<Record<keyof WebhookEvent, unknown>> | null;
  if (typeof event !== 'object' || event === null || typeof event.id !== 'string' || typeof event.type !== 'string' || typeof event.data !== 'object' || event.data === null) {
    throw new WebhookVerificationError('payload_invalid', 'The signature is valid but the body is not an event envelope (id, type, created, livemode, sequence, data).');
  }
  return value as WebhookEvent;
}
