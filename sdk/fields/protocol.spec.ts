// The messages between the merchant's page and the frames: only well-formed messages of ours pass, and nothing
// a frame sends the page can carry card data (its fields are booleans, a brand, codes and a result).
import { describe, expect, it } from 'vitest';
import { checkEmbedderOrigin, parseChannelMessage, parseFrameMessage, parseParentMessage, TAG } from './protocol.ts';

const secret = `ord_${'a'.repeat(24)}_secret_${'b'.repeat(40)}`;

describe('parseFrameMessage (frame → page)', () => {
  it('passes our well-formed messages and keeps only their known fields', () => {
    expect(parseFrameMessage({ tag: TAG, type: 'change', empty: false, complete: true, brand: 'visa', error: '', number: '4242424242424242' })).toEqual({ type: 'change', empty: false, complete: true, brand: 'visa', error: '' });
    expect(parseFrameMessage({ tag: TAG, type: 'ready', height: 40 })).toEqual({ type: 'ready', height: 40 });
    expect(parseFrameMessage({ tag: TAG, type: 'result', id: 3, result: { status: 'declined', code: 'expired_card', message: 'Expired.', attemptsRemaining: 9 } })).toEqual({
      type: 'result',
      id: 3,
      result: { status: 'declined', code: 'expired_card', message: 'Expired.', attemptsRemaining: 9 },
    });
    const issuer = { url: 'https://acs.bank.example/challenge?ref=1', method: 'POST', fields: { creq: 'eyJ' } };
    expect(parseFrameMessage({ tag: TAG, type: 'redirect', redirect: issuer })).toEqual({ type: 'redirect', redirect: issuer });
    expect(parseFrameMessage({ tag: TAG, type: 'returned', result: 'paid' })).toEqual({ type: 'returned' });
  });

  it.each([
    ['another tag', { tag: 'other', type: 'focus' }],
    ['no tag', { type: 'focus' }],
    ['an unknown type', { tag: TAG, type: 'value', value: '4242' }],
    ['a brand outside the list', { tag: TAG, type: 'change', empty: false, complete: false, brand: '4242424242424242', error: '' }],
    ['an error outside the list', { tag: TAG, type: 'change', empty: false, complete: false, brand: 'visa', error: '4242 4242' }],
    ['a string where a boolean goes', { tag: TAG, type: 'change', empty: 'no', complete: false, brand: 'visa', error: '' }],
    ['a result with a bad status', { tag: TAG, type: 'result', id: 1, result: { status: 'ok' } }],
    ['a result code that is not a code', { tag: TAG, type: 'result', id: 1, result: { status: 'failed', code: 'Card 4242424242424242', message: '' } }],
    ['a negative height', { tag: TAG, type: 'ready', height: -1 }],
    // The overlay opens an issuer's page, never a script or a plain-http page elsewhere.
    ['a javascript: redirect', { tag: TAG, type: 'redirect', redirect: { url: 'javascript:alert(1)', method: 'GET', fields: {} } }],
    ['a plain-http redirect off loopback', { tag: TAG, type: 'redirect', redirect: { url: 'http://acs.bank.example/x', method: 'GET', fields: {} } }],
    ['a redirect with credentials', { tag: TAG, type: 'redirect', redirect: { url: 'https://u:p@acs.bank.example/x', method: 'GET', fields: {} } }],
    ['a redirect by another method', { tag: TAG, type: 'redirect', redirect: { url: 'https://acs.bank.example/x', method: 'PUT', fields: {} } }],
    ['a redirect field that is not text', { tag: TAG, type: 'redirect', redirect: { url: 'https://acs.bank.example/x', method: 'POST', fields: { a: 1 } } }],
    ['a string', `${TAG}:focus`],
    ['null', null],
  ])('drops %s', (_name, data) => {
    expect(parseFrameMessage(data)).toBeNull();
  });
});

describe('parseParentMessage (page → frame)', () => {
  it('passes init with a checked style, and the credentials only when both are well formed', () => {
    expect(parseParentMessage({ tag: TAG, type: 'init', label: 'Card', placeholder: '', style: { color: '#000' } })).toEqual({ type: 'init', label: 'Card', placeholder: '', style: { color: '#000' } });
    expect(parseParentMessage({ tag: TAG, type: 'init', label: 'Card', placeholder: '', style: {}, publishableKey: 'pk_test_abcdefgh12', clientSecret: secret })).toMatchObject({ publishableKey: 'pk_test_abcdefgh12', clientSecret: secret });
  });

  it.each([
    ['a style outside the whitelist', { tag: TAG, type: 'init', label: 'Card', placeholder: '', style: { color: 'red;x' } }],
    ['a secret key instead of the publishable key', { tag: TAG, type: 'init', label: 'Card', placeholder: '', style: {}, publishableKey: 'sk_test_abcdefgh12', clientSecret: secret }],
    ['a key without the client secret', { tag: TAG, type: 'init', label: 'Card', placeholder: '', style: {}, publishableKey: 'pk_test_abcdefgh12' }],
    ['a label too long', { tag: TAG, type: 'init', label: 'x'.repeat(101), placeholder: '', style: {} }],
    ['confirm without an id', { tag: TAG, type: 'confirm', name: 'Ada' }],
    ['an unknown type', { tag: TAG, type: 'eval', code: 'alert(1)' }],
  ])('drops %s', (_name, data) => {
    expect(parseParentMessage(data)).toBeNull();
  });
});

describe('parseChannelMessage (frame → frame)', () => {
  it('passes values and field errors, drops anything else', () => {
    expect(parseChannelMessage({ tag: TAG, type: 'value', nonce: 'n1', field: 'cardCvc', value: '123' })).toEqual({ type: 'value', nonce: 'n1', field: 'cardCvc', value: '123' });
    expect(parseChannelMessage({ tag: TAG, type: 'value', nonce: 'n1', field: 'cardNumber', value: '4242' })).toBeNull();
    // The in-frame challenge is gone: 3-D Secure is the issuer's page, in the page's overlay.
    expect(parseChannelMessage({ tag: TAG, type: 'challenge-answer', code: '123456' })).toBeNull();
    expect(parseChannelMessage({ tag: TAG, type: 'invalid', field: 'cardExpiry', error: 'card_expiry_past' })).toEqual({ type: 'invalid', field: 'cardExpiry', error: 'card_expiry_past' });
    expect(parseChannelMessage({ tag: TAG, type: 'invalid', field: 'cardExpiry', error: 'boom' })).toBeNull();
  });
});

describe('checkEmbedderOrigin', () => {
  it.each([
    ['https://shop.example', 'https://shop.example'],
    ['https://shop.example:8443', 'https://shop.example:8443'],
    ['http://127.0.0.2:8080', 'http://127.0.0.2:8080'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
    ['http://shop.example', null],
    ['https://shop.example/', null],
    ['https://shop.example/path', null],
    ['https://user@shop.example', null],
    ['HTTPS://SHOP.EXAMPLE', null],
    ['https://shop.example:443', null],
    ['null', null],
    ["https://shop.example 'unsafe-inline'", null],
    ['https://shop.example;script-src *', null],
    ['javascript:alert(1)', null],
    // Wildcards and lists would widen frame-ancestors: any site could frame the fields.
    ['https://*', null],
    ['https://*.com', null],
    ["https://'self'", null],
    ['https://a.com,b', null],
    ['', null],
  ])('%s → %s', (value, expected) => {
    expect(checkEmbedderOrigin(value)).toBe(expected);
  });

  it('refuses what is not a string', () => {
    expect(checkEmbedderOrigin(undefined)).toBeNull();
    expect(checkEmbedderOrigin(['https://shop.example'])).toBeNull();
  });
});
