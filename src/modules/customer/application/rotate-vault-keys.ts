import type { VaultKeys } from '../ports/card-vault.port.ts';
import type { KeyRing } from '../../../kernel/ports/key-ring.port.ts';

/** What a rotation did: data keys re-wrapped, and how many each KEK wraps afterwards. */
export interface RotationReport {
  readonly activeKeyId: string;
  /** Webhook signing secrets found in clear (written by an earlier release) and sealed first. */
  readonly sealed: number;
  readonly rewrapped: number;
  readonly batches: number;
  readonly before: Readonly<Record<string, number>>;
  readonly after: Readonly<Record<string, number>>;
}

/** Re-wraps every data key under the active KEK (`checkout keys rotate`). */
export type RotateVaultKeys = (options?: { readonly batchSize?: number; readonly onBatch?: (rewrapped: number) => void }) => Promise<RotationReport>;

/**
 * Creates the rotation: webhook signing secrets still in clear are sealed first; then, batch after batch (each its own short transaction, rows another rotation
 * holds skipped), every data key not wrapped by the active KEK is unwrapped under its old KEK and
 * wrapped under the active one, in memory; no card number is decrypted. Vaulting and charging go on
 * meanwhile: new cards are sealed under the active KEK already, and a card not yet re-wrapped still
 * opens under its old KEK, which stays configured until the rotation reports none left under it.
 * @throws Error when a data key's KEK is not configured (the rotation stops; what it did stands)
 */
export function createRotateVaultKeys(deps: { readonly keys: KeyRing; readonly store: VaultKeys }): RotateVaultKeys {
  return async (options = {}) => {
    const batchSize = options.batchSize ?? 500;
    // A secret an earlier release wrote in clear is sealed under the active KEK first: nothing stays in clear.
    let sealed = 0;
    for (;;) {
      const changed = await deps.store.sealClearBatch(batchSize, (plaintext, context) => deps.keys.seal(plaintext, context));
      if (changed === 0) break;
      sealed += changed;
    }
    const before = await deps.store.countByKek();
    let rewrapped = 0;
    let batches = 0;
    for (;;) {
      const changed = await deps.store.rewrapBatch(deps.keys.activeKeyId, batchSize, (key) => deps.keys.rewrap(key, key.context));
      if (changed === 0) break;
      rewrapped += changed;
      batches++;
      options.onBatch?.(changed);
    }
    return { activeKeyId: deps.keys.activeKeyId, sealed, rewrapped, batches, before, after: await deps.store.countByKek() };
  };
}
