/**
 * A secret sealed by envelope encryption: `ciphertext` under a data key of its own, the data key
 * kept only wrapped by the key-encryption key (KEK) `kekId` names. The KEK itself never leaves the
 * key ring (the operator's configuration); this is all a store holds.
 */
export interface SealedSecret {
  readonly kekId: string;
  readonly wrappedKey: Uint8Array;
  readonly ciphertext: Uint8Array;
}

/** A data key as stored: wrapped by the KEK `kekId` names. */
export interface WrappedKey {
  readonly kekId: string;
  readonly wrappedKey: Uint8Array;
}

/**
 * The vault's keys: seals secrets under fresh data keys wrapped by the active KEK, opens them under
 * whichever configured KEK wrapped them, re-wraps data keys under the active KEK (rotation, never
 * touching a ciphertext), and computes keyed fingerprints. `context` binds a sealed secret to the
 * record it belongs to (its id): a ciphertext copied onto another record does not open.
 */
export interface KeyRing {
  /** The id of the KEK that wraps new data keys. */
  readonly activeKeyId: string;
  /** False for a development key generated on first start: live-mode vaulting refuses to use it. */
  readonly configured: boolean;
  /** Whether a KEK of this id is configured (old ones stay until everything is re-wrapped). */
  hasKey(kekId: string): boolean;
  /** Seals text under a new data key wrapped by the active KEK. */
  seal(plaintext: string, context: string): SealedSecret;
  /**
   * Opens a sealed secret.
   * @throws Error when its KEK is not configured or it does not authenticate (tampered, or another record's)
   */
  open(sealed: SealedSecret, context: string): string;
  /**
   * The data key wrapped by the active KEK instead: unwrapped under its old KEK and wrapped again,
   * in memory; the secret it encrypts is never decrypted.
   * @throws Error when its KEK is not configured or it does not authenticate
   */
  rewrap(key: WrappedKey, context: string): WrappedKey;
  /** A new random secret (base64), e.g. a merchant's fingerprint key. */
  newSecret(): string;
  /** HMAC-SHA-256 of `data` keyed by `secret` (a newSecret), hex: a fingerprint that needs the key to compute. */
  keyedHash(secret: string, data: string): string;
}
