import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { KeyRing, SealedSecret, WrappedKey } from '../../ports/key-ring.port.ts';

/** A key-encryption key: its id (stored beside every key it wraps) and its 32 bytes. */
export interface KeyEncryptionKey {
  readonly id: string;
  readonly secret: Uint8Array;
}

/** What a KEK id may be: short, printable, no separators of the VAULT_KEYS list. */
export const KEK_ID = /^[A-Za-z0-9_.-]{1,64}$/;

const IV_BYTES = 12;
const TAG_BYTES = 16;

function encrypt(key: Uint8Array, plaintext: Uint8Array, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function decrypt(key: Uint8Array, sealed: Uint8Array, aad: string): Buffer {
  const data = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (data.length < IV_BYTES + TAG_BYTES) throw new Error('vault: sealed data too short');
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(data.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(data.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

/**
 * KeyRing on node:crypto: AES-256-GCM everywhere. A secret is encrypted under a fresh 256-bit data
 * key (random 96-bit IV, 128-bit tag, the record's context as associated data); the data key is
 * wrapped by the active KEK with AES-256-GCM too, its associated data binding the KEK id and the
 * context. Data keys are zeroed once used.
 * @throws Error when a key is not 32 bytes, an id is malformed or repeated, or the active id is not among the keys
 */
export function createAesGcmKeyRing(options: { readonly keys: readonly KeyEncryptionKey[]; readonly activeKeyId?: string; readonly configured: boolean }): KeyRing {
  const keys = new Map<string, Uint8Array>();
  for (const key of options.keys) {
    if (!KEK_ID.test(key.id)) throw new Error(`vault key id "${key.id}" must be 1 to 64 of A-Z a-z 0-9 _ . -`);
    if (key.secret.byteLength !== 32) throw new Error(`vault key "${key.id}" must be 32 bytes (base64 of 32 random bytes), not ${key.secret.byteLength}`);
    if (keys.has(key.id)) throw new Error(`vault key id "${key.id}" is given twice`);
    keys.set(key.id, key.secret);
  }
  const activeKeyId = options.activeKeyId ?? options.keys[0]?.id;
  if (activeKeyId === undefined || !keys.has(activeKeyId)) throw new Error(`the active vault key "${activeKeyId ?? ''}" is not among the configured keys`);
  const kek = (id: string) => {
    const key = keys.get(id);
    if (!key) throw new Error(`vault: the key-encryption key "${id}" is not configured (add it to VAULT_KEYS until \`checkout keys rotate\` has re-wrapped everything)`);
    return key;
  };
  const wrapAad = (kekId: string, context: string) => `kek:${kekId}|${context}`;
  const unwrap = (key: WrappedKey, context: string) => decrypt(kek(key.kekId), key.wrappedKey, wrapAad(key.kekId, context));

  return {
    activeKeyId,
    configured: options.configured,
    hasKey: (id) => keys.has(id),
    seal(plaintext, context): SealedSecret {
      const dataKey = randomBytes(32);
      try {
        const ciphertext = encrypt(dataKey, Buffer.from(plaintext, 'utf8'), context);
        return { kekId: activeKeyId, wrappedKey: encrypt(kek(activeKeyId), dataKey, wrapAad(activeKeyId, context)), ciphertext };
      } finally {
        dataKey.fill(0);
      }
    },
    open(sealed, context) {
      const dataKey = unwrap(sealed, context);
      try {
        return decrypt(dataKey, sealed.ciphertext, context).toString('utf8');
      } finally {
        dataKey.fill(0);
      }
    },
    rewrap(key, context): WrappedKey {
      const dataKey = unwrap(key, context);
      try {
        return { kekId: activeKeyId, wrappedKey: encrypt(kek(activeKeyId), dataKey, wrapAad(activeKeyId, context)) };
      } finally {
        dataKey.fill(0);
      }
    },
    newSecret: () => randomBytes(32).toString('base64'),
    keyedHash: (secret, data) => createHmac('sha256', Buffer.from(secret, 'base64')).update(data, 'utf8').digest('hex'),
  };
}

/**
 * Parses VAULT_KEYS: a comma list of `id:base64` entries, each 32 bytes once decoded.
 * @throws Error naming the entry at fault (never its key material)
 */
export function parseKeyList(raw: string): KeyEncryptionKey[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry, i) => {
      const colon = entry.indexOf(':');
      const id = colon < 0 ? '' : entry.slice(0, colon);
      const material = colon < 0 ? '' : entry.slice(colon + 1);
      if (!KEK_ID.test(id)) throw new Error(`VAULT_KEYS entry ${i + 1} must be "id:base64-of-32-bytes" with an id of 1 to 64 of A-Z a-z 0-9 _ . -`);
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(material)) throw new Error(`VAULT_KEYS entry "${id}" must carry base64 key material after the colon`);
      const secret = Buffer.from(material, 'base64');
      if (secret.length !== 32) throw new Error(`VAULT_KEYS entry "${id}" decodes to ${secret.length} bytes; it must be 32 (openssl rand -base64 32)`);
      return { id, secret };
    });
}
