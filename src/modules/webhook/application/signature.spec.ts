import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { verifyWebhook } from '../../../../sdk/index.ts';
import { signatureHeaderValue } from '../../../../sdk/webhooks/signature.ts';
import { sign, SIGNATURE_HEADER, signatureHeader } from './signature.ts';

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const OLD = 'whsec_old_zyxwvutsrqponmlkjihgfedcba9876543';
const BODY = JSON.stringify({ type: 'order.paid', id: 'evt_1', created: '2025-06-15T14:13:20.512Z', livemode: false, sequence: 2, data: { id: 'ord_1', reference: 'Bestellung-Ä€-7', amount: 2500, currency: 'EUR' } });
const T = 1_750_000_400;

describe('sign', () => {
  test('is lowercase hex HMAC-SHA-256 keyed with the whole secret over "<t>.<body>"', () => {
    const expected = createHmac('sha256', SECRET).update(`${T}.${BODY}`, 'utf8').digest('hex');
    expect(sign(SECRET, T, BODY)).toBe(expected);
    expect(sign(SECRET, T, BODY)).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a known vector', () => {
    // printf '%s' '1750000400.{"a":1}' | openssl dgst -sha256 -hmac 'whsec_k'
    expect(sign('whsec_k', T, '{"a":1}')).toBe(createHmac('sha256', 'whsec_k').update('1750000400.{"a":1}').digest('hex'));
  });

  test('changes with the secret (prefix included), the timestamp and every byte of the body', () => {
    const base = sign(SECRET, T, BODY);
    expect(sign(SECRET.slice('whsec_'.length), T, BODY)).not.toBe(base);
    expect(sign(SECRET, T + 1, BODY)).not.toBe(base);
    expect(sign(SECRET, T, `${BODY} `)).not.toBe(base);
    expect(sign(SECRET, T, BODY.replace('2500', '2501'))).not.toBe(base);
  });

  test('signs the UTF-8 bytes of the body', () => {
    expect(sign(SECRET, T, BODY)).toBe(createHmac('sha256', SECRET).update(Buffer.concat([Buffer.from(`${T}.`), Buffer.from(BODY, 'utf8')])).digest('hex'));
  });
});

describe('signatureHeader', () => {
  test('one secret: t=<t>,v1=<sig>', () => {
    expect(SIGNATURE_HEADER).toBe('Checkout-Signature');
    expect(signatureHeader([SECRET], T, BODY)).toBe(`t=${T},v1=${sign(SECRET, T, BODY)}`);
  });

  test('during a rotation: one v1 part per secret, in the order given (newest first)', () => {
    expect(signatureHeader([SECRET, OLD], T, BODY)).toBe(`t=${T},v1=${sign(SECRET, T, BODY)},v1=${sign(OLD, T, BODY)}`);
  });

  test('agrees byte for byte with the SDK, and the SDK verifier accepts it with either secret', () => {
    expect(signatureHeader([SECRET, OLD], T, BODY)).toBe(signatureHeaderValue(BODY, [SECRET, OLD], T));
    const header = signatureHeader([SECRET, OLD], T, BODY);
    const now = () => T * 1000;
    expect(verifyWebhook(BODY, header, SECRET, { now }).id).toBe('evt_1');
    expect(verifyWebhook(Buffer.from(BODY), header, OLD, { now }).data.reference).toBe('Bestellung-Ä€-7');
    expect(() => verifyWebhook(BODY, signatureHeader([OLD], T, BODY), SECRET, { now })).toThrow(/No v1 signature/);
  });

  test('no secret gives a header without v1 parts, which a verifier refuses', () => {
    expect(signatureHeader([], T, BODY)).toBe(`t=${T}`);
    expect(() => verifyWebhook(BODY, `t=${T}`, SECRET, { now: () => T * 1000 })).toThrow(/malformed/);
  });
});
