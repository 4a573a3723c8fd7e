import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAesGcmKeyRing, parseKeyList } from './aes-gcm-key-ring.ts';

const a = { id: 'a', secret: randomBytes(32) };
const b = { id: 'b', secret: randomBytes(32) };

describe('the AES-256-GCM key ring', () => {
  it('seals under a fresh data key wrapped by the active KEK, and opens it again', () => {
    const ring = createAesGcmKeyRing({ keys: [a], configured: true });
    const one = ring.seal('4242424242424242', 'card_1');
    const two = ring.seal('4242424242424242', 'card_1');
    expect(one.kekId).toBe('a');
    expect(Buffer.from(one.ciphertext).equals(Buffer.from(two.ciphertext))).toBe(false);
    expect(Buffer.from(one.ciphertext).toString('latin1')).not.toContain('4242');
    expect(ring.open(one, 'card_1')).toBe('4242424242424242');
  });

  it('refuses a ciphertext moved to another record, tampered with, or under a KEK no longer configured', () => {
    const ring = createAesGcmKeyRing({ keys: [a], configured: true });
    const sealed = ring.seal('secret', 'card_1');
    expect(() => ring.open(sealed, 'card_2')).toThrow();
    const tampered = Buffer.from(sealed.ciphertext);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => ring.open({ ...sealed, ciphertext: tampered }, 'card_1')).toThrow();
    expect(() => ring.open({ ...sealed, kekId: 'b' }, 'card_1')).toThrow(/not configured/);
    expect(() => createAesGcmKeyRing({ keys: [b], configured: true }).open(sealed, 'card_1')).toThrow(/"a" is not configured/);
  });

  it('re-wraps a data key under the new active KEK without the ciphertext; the old KEK can then go', () => {
    const sealed = createAesGcmKeyRing({ keys: [a], configured: true }).seal('secret', 'card_1');
    const both = createAesGcmKeyRing({ keys: [b, a], configured: true });
    expect(both.activeKeyId).toBe('b');
    const moved = both.rewrap(sealed, 'card_1');
    expect(moved.kekId).toBe('b');
    const onlyNew = createAesGcmKeyRing({ keys: [b], configured: true });
    expect(onlyNew.open({ ...moved, ciphertext: sealed.ciphertext }, 'card_1')).toBe('secret');
  });

  it('keys fingerprints: the same secret and number give the same hash, another secret another', () => {
    const ring = createAesGcmKeyRing({ keys: [a], configured: false });
    const s1 = ring.newSecret();
    const s2 = ring.newSecret();
    expect(ring.keyedHash(s1, '4242424242424242')).toBe(ring.keyedHash(s1, '4242424242424242'));
    expect(ring.keyedHash(s1, '4242424242424242')).not.toBe(ring.keyedHash(s2, '4242424242424242'));
  });

  it('parses VAULT_KEYS and names the faulty entry without its material', () => {
    const material = randomBytes(32).toString('base64');
    expect(parseKeyList(`k1:${material}, k2:${material}`).map((k) => k.id)).toEqual(['k1', 'k2']);
    expect(() => parseKeyList(`k1:${randomBytes(16).toString('base64')}`)).toThrow(/decodes to 16 bytes/);
    expect(() => parseKeyList('no-colon')).toThrow(/entry 1/);
    expect(() => createAesGcmKeyRing({ keys: [a], activeKeyId: 'zz', configured: true })).toThrow(/not among/);
  });
});
