import type { KeyRing, SealedSecret } from '../../../kernel/ports/key-ring.port.ts';
import type { SigningSecretRecord } from '../ports/webhook-endpoint-repository.port.ts';

/** Prefix of every webhook signing secret. */
export const SIGNING_SECRET_PREFIX = 'whsec_';

/**
 * Webhook signing secrets at rest: sealed under the card vault's key ring (envelope encryption, the
 * endpoint's id as associated data, so a ciphertext moved to another endpoint does not open; its
 * data key re-wrapped by `checkout keys rotate` like a card's), opened in memory to sign.
 */
export interface SigningSecrets {
  /** Seals a new secret of the endpoint. */
  seal(secret: string, endpointId: string): SealedSecret;
  /**
   * The endpoint's secrets in clear, in the order given. A secret opened once is kept in memory by
   * its id (a secret never changes; rotation adds a new one), so signing a delivery unseals nothing
   * after the endpoint's first. @throws Error when one does not open (its KEK not configured, or tampered)
   */
  open(records: readonly SigningSecretRecord[], endpointId: string): string[];
}

/** Options of the in-memory cache of opened secrets. */
export interface SigningSecretCacheOptions {
  /** Most secrets kept opened (the oldest used go first); 10,000 by default. */
  readonly maxEntries?: number;
  /** A secret not used for this long is dropped from memory (a retired one stops being asked for); 10 minutes by default. */
  readonly idleMs?: number;
  /** Monotonic milliseconds (tests drive it). */
  readonly now?: () => number;
}

/**
 * Creates the signing secrets over the vault's key ring. The cache holds only secrets this process
 * signs with anyway, keyed by the secret's id (never by anything a caller sends), filled only by a
 * successful authenticated decryption, bounded, and emptied of secrets left unused; nothing of it
 * is ever logged.
 */
export function createSigningSecrets(keys: KeyRing, options: SigningSecretCacheOptions = {}): SigningSecrets {
  const maxEntries = options.maxEntries ?? 10_000;
  const idleMs = options.idleMs ?? 10 * 60_000;
  const now = options.now ?? (() => performance.now());
  // Insertion order is use order: an entry is moved to the end each time it is used.
  const opened = new Map<string, { readonly secret: string; readonly endpointId: string; usedAt: number }>();
  let sweptAt = now();

  function sweep(at: number): void {
    for (const [id, entry] of opened) {
      if (at - entry.usedAt < idleMs) break;
      opened.delete(id);
    }
    sweptAt = at;
  }

  function openOne(record: SigningSecretRecord, endpointId: string, at: number): string {
    if ('clear' in record) return record.clear;
    const hit = opened.get(record.id);
    if (hit && hit.endpointId === endpointId) {
      opened.delete(record.id);
      hit.usedAt = at;
      opened.set(record.id, hit);
      return hit.secret;
    }
    const secret = keys.open(record.sealed, endpointId);
    opened.set(record.id, { secret, endpointId, usedAt: at });
    while (opened.size > maxEntries) opened.delete(opened.keys().next().value!);
    return secret;
  }

  return {
    seal: (secret, endpointId) => keys.seal(secret, endpointId),
    open(records, endpointId) {
      const at = now();
      if (at - sweptAt >= idleMs) sweep(at);
      return records.map((record) => openOne(record, endpointId, at));
    },
  };
}
