import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from './verify.ts';
import { WebhookVerificationError, type WebhookVerificationErrorReason } from './webhook-verification-error.ts';

const SECRET = 'whsec_P3ZiMeK2Yp3PJqDODrEGLsp3NxZQmYiA';
const OTHER_SECRET = 'whsec_O0mya8jw9M72zjOIdtDUriUbPwgYItKz';
const T = 1_750_000_000;
const event = {
  id: 'evt_1a2b3c',
  type: 'order.paid',
  created: '2025-06-15T14:13:20.000Z',
  livemode: false,
  sequence: 3,
  data: { id: 'ord_9z8y', reference: 'Bestellung-ä€-42', amount: 2500, currency: 'EUR' },
};
const BODY = JSON.stringify(event);

/** Signs independently of the SDK, straight from the spec, so a shared bug cannot hide. */
function sign(body: string | Buffer, secret: string, timestamp: number): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}
const header = (signatures: string[], timestamp = T) => [`t=${timestamp}`, ...signatures.map((s) => `v1=${s}`)].join(',');
/** A clock `seconds` after T. */
const at = (seconds: number) => () => (T + seconds) * 1000;

function rejection(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return err as WebhookVerificationError;
  }
  throw new Error('expected verifyWebhook to throw');
}
const expectRejected = (fn: () => unknown, reason: WebhookVerificationErrorReason) => {
  const error = rejection(fn);
  expect(error.reason).toBe(reason);
  return error;
};

describe('verifyWebhook', () => {
  it('returns the parsed event for a valid header, from a string, a Buffer or a Uint8Array', () => {
    const valid = header([sign(BODY, SECRET, T)]);
    expect(verifyWebhook(BODY, valid, SECRET, { now: at(1) })).toEqual(event);
    expect(verifyWebhook(Buffer.from(BODY), valid, SECRET, { now: at(1) })).toEqual(event);
    expect(verifyWebhook(new Uint8Array(Buffer.from(BODY)), valid, SECRET, { now: at(1) })).toEqual(event);
  });

  it('tolerates spaces around the parts and ignores unknown schemes', () => {
    expect(verifyWebhook(BODY, ` t=${T}, v0=abc , v1=${sign(BODY, SECRET, T)} `, SECRET, { now: at(0) }).id).toBe('evt_1a2b3c');
  });

  it('rejects a tampered body', () => {
    const tampered = BODY.replace('2500', '25');
    const error = expectRejected(() => verifyWebhook(tampered, header([sign(BODY, SECRET, T)]), SECRET, { now: at(0) }), 'signature_mismatch');
    expect(error.message).toMatch(/No v1 signature/);
  });

  it('rejects a signature made with another secret, naming the secret as the likely mistake', () => {
    const error = expectRejected(() => verifyWebhook(BODY, header([sign(BODY, OTHER_SECRET, T)]), SECRET, { now: at(0) }), 'signature_mismatch');
    expect(error.message).toContain('Check you use the secret of this endpoint, whsec_…; test and live secrets differ');
  });

  it('rejects a signature over another timestamp (the timestamp is signed)', () => {
    expectRejected(() => verifyWebhook(BODY, header([sign(BODY, SECRET, T)], T + 1), SECRET, { now: at(0) }), 'signature_mismatch');
  });

  it('with the default tolerance, accepts 299 s of age and rejects 300 s and 301 s, either way', () => {
    const valid = header([sign(BODY, SECRET, T)]);
    expect(verifyWebhook(BODY, valid, SECRET, { now: at(299) }).id).toBe(event.id);
    expect(verifyWebhook(BODY, valid, SECRET, { now: at(-299) }).id).toBe(event.id);
    expectRejected(() => verifyWebhook(BODY, valid, SECRET, { now: at(300) }), 'timestamp_outside_tolerance');
    const old = expectRejected(() => verifyWebhook(BODY, valid, SECRET, { now: at(301) }), 'timestamp_outside_tolerance');
    expect(old.message).toContain('301 s in the past');
    expect(old.message).toContain('tolerance of 300 s');
    expect(old.message).toMatch(/clock/);
    const ahead = expectRejected(() => verifyWebhook(BODY, valid, SECRET, { now: at(-301) }), 'timestamp_outside_tolerance');
    expect(ahead.message).toContain('301 s in the future');
  });

  it('uses the real clock by default', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifyWebhook(BODY, header([sign(BODY, SECRET, now)], now), SECRET).id).toBe(event.id);
    expectRejected(() => verifyWebhook(BODY, header([sign(BODY, SECRET, now - 600)], now - 600), SECRET), 'timestamp_outside_tolerance');
  });

  it('takes a configurable tolerance', () => {
    const valid = header([sign(BODY, SECRET, T)]);
    expect(verifyWebhook(BODY, valid, SECRET, { now: at(599), toleranceSeconds: 600 }).id).toBe(event.id);
    expectRejected(() => verifyWebhook(BODY, valid, SECRET, { now: at(600), toleranceSeconds: 600 }), 'timestamp_outside_tolerance');
    expectRejected(() => verifyWebhook(BODY, valid, SECRET, { now: at(10), toleranceSeconds: 10 }), 'timestamp_outside_tolerance');
    expect(() => verifyWebhook(BODY, valid, SECRET, { toleranceSeconds: 0 })).toThrow(RangeError);
    expect(() => verifyWebhook(BODY, valid, SECRET, { toleranceSeconds: Number.NaN })).toThrow(RangeError);
  });

  it('hints at the unit when options.now returns seconds', () => {
    const error = expectRejected(() => verifyWebhook(BODY, header([sign(BODY, SECRET, T)]), SECRET, { now: () => T }), 'timestamp_outside_tolerance');
    expect(error.message).toContain('milliseconds');
  });

  it('accepts a rotation header with two v1 parts when only the second matches', () => {
    const rotation = header([sign(BODY, OTHER_SECRET, T), sign(BODY, SECRET, T)]);
    expect(verifyWebhook(BODY, rotation, SECRET, { now: at(0) }).id).toBe(event.id);
  });

  it('accepts any of several secrets (the receiver rotating its own configuration)', () => {
    expect(verifyWebhook(BODY, header([sign(BODY, SECRET, T)]), [OTHER_SECRET, SECRET], { now: at(0) }).id).toBe(event.id);
    expectRejected(() => verifyWebhook(BODY, header([sign(BODY, SECRET, T)]), [OTHER_SECRET], { now: at(0) }), 'signature_mismatch');
  });

  it('rejects a parsed object with the raw-body hint', () => {
    const error = expectRejected(() => verifyWebhook(event as never, header([sign(BODY, SECRET, T)]), SECRET, { now: at(0) }), 'body_not_raw');
    expect(error.message).toContain('parsed JavaScript object');
    expect(error.message).toContain("Pass the raw body bytes, not the parsed JSON: with Express use express.raw({type: 'application/json'})");
    expectRejected(() => verifyWebhook(undefined as never, header([sign(BODY, SECRET, T)]), SECRET), 'body_not_raw');
    expectRejected(() => verifyWebhook(String(event), header([sign(BODY, SECRET, T)]), SECRET), 'body_not_raw');
  });

  it('says the body looks re-serialized when it is pretty-printed JSON', () => {
    const pretty = JSON.stringify(event, null, 2);
    const error = expectRejected(() => verifyWebhook(pretty, header([sign(BODY, SECRET, T)]), SECRET, { now: at(0) }), 'signature_mismatch');
    expect(error.message).toMatch(/re-serialized/);
    expect(error.message).toContain('express.raw');
    const spaced = JSON.stringify(event).replaceAll('":', '": ');
    expect(rejection(() => verifyWebhook(spaced, header([sign(BODY, SECRET, T)]), SECRET, { now: at(0) })).message).toMatch(/re-serialized/);
    // A compact body with the wrong secret gets the secret hint only.
    expect(rejection(() => verifyWebhook(BODY, header([sign(BODY, OTHER_SECRET, T)]), SECRET, { now: at(0) })).message).not.toMatch(/re-serialized/);
  });

  it('explains a missing header', () => {
    for (const missing of [undefined, null, '', '  ']) {
      const error = expectRejected(() => verifyWebhook(BODY, missing, SECRET), 'header_missing');
      expect(error.message).toContain('Checkout-Signature');
    }
  });

  it('explains a malformed header, showing what it got', () => {
    const signature = sign(BODY, SECRET, T);
    for (const malformed of [
      signature,
      `v1=${signature}`,
      `t=${T}`,
      `t=abc,v1=${signature}`,
      `t=${T},t=${T},v1=${signature}`,
      `t=${T};v1=${signature}`,
      `t=${T},v1=`,
      '=,=',
    ]) {
      const error = expectRejected(() => verifyWebhook(BODY, malformed, SECRET, { now: at(0) }), 'header_malformed');
      expect(error.message).toContain('t=<unix seconds>,v1=<hex signature>');
    }
    expectRejected(() => verifyWebhook(BODY, ['a', 'b'] as never, SECRET), 'header_malformed');
  });

  it('rejects a secret that is not a whsec_ secret without echoing it', () => {
    const valid = header([sign(BODY, SECRET, T)]);
    const apiKey = `sk_test_${'a'.repeat(32)}`;
    const error = expectRejected(() => verifyWebhook(BODY, valid, apiKey, { now: at(0) }), 'secret_invalid');
    expect(error.message).toContain('whsec_');
    expect(error.message).toContain('API key (sk_test_…)');
    expect(error.message).not.toContain(apiKey);
    expectRejected(() => verifyWebhook(BODY, valid, '', { now: at(0) }), 'secret_invalid');
    expectRejected(() => verifyWebhook(BODY, valid, undefined as never, { now: at(0) }), 'secret_invalid');
    expectRejected(() => verifyWebhook(BODY, valid, [], { now: at(0) }), 'secret_invalid');
    expectRejected(() => verifyWebhook(BODY, valid, [SECRET, 'nope'], { now: at(0) }), 'secret_invalid');
  });

  it('rejects the bare prefix as a secret: a signature anyone can make with the key "whsec_" is not accepted', () => {
    const forged = header([sign(BODY, 'whsec_', T)]);
    expectRejected(() => verifyWebhook(BODY, forged, 'whsec_', { now: at(0) }), 'secret_invalid');
    expectRejected(() => verifyWebhook(BODY, forged, [SECRET, 'whsec_'], { now: at(0) }), 'secret_invalid');
  });

  it('compares without throwing when a signature has another length', () => {
    const signature = sign(BODY, SECRET, T);
    for (const odd of [signature.slice(0, 10), `${signature}00`, 'ü'.repeat(32), signature.toUpperCase().slice(0, 63)]) {
      expectRejected(() => verifyWebhook(BODY, header([odd]), SECRET, { now: at(0) }), 'signature_mismatch');
    }
    // A short part before the matching one does not stop the search.
    expect(verifyWebhook(BODY, header(['00', signature]), SECRET, { now: at(0) }).id).toBe(event.id);
  });

  it('rejects a validly signed body that is not an event envelope', () => {
    for (const body of ['not json', '[]', '{"id":"evt_1"}']) {
      expectRejected(() => verifyWebhook(body, header([sign(body, SECRET, T)]), SECRET, { now: at(0) }), 'payload_invalid');
    }
  });

  it('checks the signature before the timestamp', () => {
    expectRejected(() => verifyWebhook(BODY, header([sign(BODY, OTHER_SECRET, T)]), SECRET, { now: at(10_000) }), 'signature_mismatch');
  });
});
