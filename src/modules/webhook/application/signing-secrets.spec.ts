import { describe, expect, it } from 'vitest';
import type { KeyRing } from '../../../kernel/ports/key-ring.port.ts';
import type { SigningSecretRecord } from '../ports/webhook-endpoint-repository.port.ts';
import { createSigningSecrets } from './signing-secrets.ts';

/** A key ring that "seals" into readable bytes bound to the context, and counts its openings. */
function countingKeyRing(): KeyRing & { opened: number } {
  const ring = {
    opened: 0,
    activeKeyId: 'k',
    configured: true,
    hasKey: () => true,
    seal: (plaintext: string, context: string) => ({ kekId: 'k', wrappedKey: new Uint8Array(1), ciphertext: new TextEncoder().encode(JSON.stringify([context, plaintext])) }),
    open(sealed: { ciphertext: Uint8Array }, context: string) {
      const [boundTo, plaintext] = JSON.parse(new TextDecoder().decode(sealed.ciphertext)) as [string, string];
      if (boundTo !== context) throw new Error('does not authenticate');
      ring.opened++;
      return plaintext;
    },
    rewrap: () => {
      throw new Error('not used');
    },
    newSecret: () => '',
    keyedHash: () => '',
  };
  return ring;
}

describe('signing secrets', () => {
  it('opens a sealed secret once, then signs from memory; a clear row (an earlier release\'s) is answered as it is', () => {
    const keys = countingKeyRing();
    let now = 0;
    const secrets = createSigningSecrets(keys, { now: () => now });
    const records: SigningSecretRecord[] = [
      { id: '2', sealed: secrets.seal('whsec_new', 'we_a') },
      { id: '1', clear: 'whsec_old' },
    ];
    for (let i = 0; i < 100; i++) {
      now += 1000;
      expect(secrets.open(records, 'we_a')).toEqual(['whsec_new', 'whsec_old']);
    }
    expect(keys.opened).toBe(1);
  });

  it('does not answer a secret kept for one endpoint to another, and caches nothing that failed to open', () => {
    const keys = countingKeyRing();
    const secrets = createSigningSecrets(keys);
    const record: SigningSecretRecord = { id: '7', sealed: secrets.seal('whsec_a', 'we_a') };
    expect(secrets.open([record], 'we_a')).toEqual(['whsec_a']);
    expect(() => secrets.open([record], 'we_b')).toThrow(/authenticate/);
    expect(() => secrets.open([record], 'we_b')).toThrow(/authenticate/);
    expect(secrets.open([record], 'we_a')).toEqual(['whsec_a']);
    expect(keys.opened).toBe(1);
  });

  it('forgets a secret left unused (a retired one) and keeps at most maxEntries', () => {
    const keys = countingKeyRing();
    let now = 0;
    const secrets = createSigningSecrets(keys, { now: () => now, idleMs: 60_000, maxEntries: 2 });
    const record = (id: string) => ({ id, sealed: secrets.seal(`whsec_${id}`, 'we_a') });
    const [a, b, c] = [record('a'), record('b'), record('c')];
    secrets.open([a], 'we_a');
    now = 30_000;
    secrets.open([b], 'we_a');
    now = 70_000; // a idle for 70 s: dropped at this open; b (40 s) kept
    secrets.open([b], 'we_a');
    expect(keys.opened).toBe(2);
    secrets.open([a], 'we_a');
    expect(keys.opened).toBe(3);
    // a and b are held; c makes three: the least recently used (b) goes.
    secrets.open([c], 'we_a');
    secrets.open([a], 'we_a');
    expect(keys.opened).toBe(4);
    secrets.open([b], 'we_a');
    expect(keys.opened).toBe(5);
  });
});
