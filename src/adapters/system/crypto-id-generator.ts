import { randomBytes } from 'node:crypto';
import type { IdGenerator } from '../../ports/shared/id-generator.port.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** n characters drawn uniformly from [0-9A-Za-z] (rejection sampling, so no modulo bias). */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const byte of randomBytes(n + 8)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

/** Ids of 24 base62 characters (142 random bits) and secrets of 32 (190 bits), from the OS CSPRNG. */
export const cryptoIdGenerator: IdGenerator = {
  newId: (prefix) => prefix + randomBase62(24),
  newSecret: (prefix) => prefix + randomBase62(32),
};
