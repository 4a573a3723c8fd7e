import { describe, expect, it } from 'vitest';
import { cryptoIdGenerator, randomBase62 } from './crypto-id-generator.ts';

describe('cryptoIdGenerator', () => {
  it('makes ids of 24 and secrets of 32 base62 characters after the prefix, never the same twice across pool refills', () => {
    const seen = new Set<string>();
    // 20,000 ids use about 500 KiB of random bytes: the 4 KiB pool is refilled over a hundred times.
    for (let i = 0; i < 20_000; i++) {
      const id = cryptoIdGenerator.newId('ord_');
      expect(id).toMatch(/^ord_[0-9A-Za-z]{24}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
    expect(cryptoIdGenerator.newSecret('cs_')).toMatch(/^cs_[0-9A-Za-z]{32}$/);
  });

  it('draws every character about equally often (no modulo bias towards the first ones)', () => {
    const counts = new Map<string, number>();
    const text = randomBase62(62 * 2000);
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Each character is expected 2,000 times (sd ≈ 44). `byte % 62` without rejection would draw the first
    // eight characters 5 times in 256 instead of 4, about 2,480 times each; the bounds are 6.8 sd out.
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(1700);
      expect(n).toBeLessThan(2300);
    }
  });
});
