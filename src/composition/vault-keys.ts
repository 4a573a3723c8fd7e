import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from './config.ts';
import { createAesGcmKeyRing } from '../kernel/adapters/crypto/aes-gcm-key-ring.ts';
import type { KeyRing } from '../kernel/ports/key-ring.port.ts';
import type { Log } from './log.ts';

/** The id of the development KEK a start without VAULT_KEYS generates. */
export const DEV_KEY_ID = 'dev';

/**
 * The vault's key ring from the configuration: the operator's KEKs (VAULT_KEYS, the active one
 * VAULT_ACTIVE_KEY or the first), or, when none is configured, a development KEK kept in
 * VAULT_DEV_KEY_FILE outside the database (generated on first start, mode 0600, with a warning).
 * A development key serves test mode only: live-mode vaulting refuses it.
 */
export function loadKeyRing(config: Pick<Config, 'vaultKeys' | 'vaultActiveKey' | 'vaultDevKeyFile'>, log: Pick<Log, 'warn'>): KeyRing {
  if (config.vaultKeys.length > 0) return createAesGcmKeyRing({ keys: config.vaultKeys, activeKeyId: config.vaultActiveKey, configured: true });
  let material: string;
  try {
    material = readFileSync(config.vaultDevKeyFile, 'utf8').trim();
  } catch {
    material = randomBytes(32).toString('base64');
    mkdirSync(dirname(config.vaultDevKeyFile), { recursive: true });
    try {
      writeFileSync(config.vaultDevKeyFile, `${material}\n`, { mode: 0o600, flag: 'wx' });
    } catch {
      // Another process of this installation generated it first: use that one.
      material = readFileSync(config.vaultDevKeyFile, 'utf8').trim();
    }
    log.warn(`VAULT_KEYS is not set: generated a development vault key in ${config.vaultDevKeyFile}. Test-mode cards are encrypted under it; live-mode vaulting is refused until VAULT_KEYS is configured (docs/recurring.md). Losing this file makes the saved test cards unreadable.`);
  }
  return createAesGcmKeyRing({ keys: [{ id: DEV_KEY_ID, secret: Buffer.from(material, 'base64') }], configured: false });
}

/** A key ring that lives as long as the process (tests, and tools that never vault): test mode only. */
export function ephemeralKeyRing(): KeyRing {
  return createAesGcmKeyRing({ keys: [{ id: 'ephemeral', secret: randomBytes(32) }], configured: false });
}
