import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from './config.ts';
import { createAesGcmKeyRing } from '../kernel/adapters/crypto/aes-gcm-key-ring.ts';
import type { KeyRing } from '../kernel/ports/key-ring.port.ts';
import type { Log } from './log.ts';
import { StartupError } from './startup.ts';

/** The id of the development KEK a start without VAULT_KEYS generates. */
export const DEV_KEY_ID = 'dev';

/**
 * The vault's key ring from the configuration: the operator's KEKs (VAULT_KEYS, the active one
 * VAULT_ACTIVE_KEY or the first), or, when none is configured, a development KEK kept in
 * VAULT_DEV_KEY_FILE outside the database (generated on first start, mode 0600, with a warning).
 * A development key serves test mode only: live-mode vaulting refuses it.
 * @throws StartupError naming the file and what to do when it exists but cannot be read, or cannot be made.
 */
export function loadKeyRing(config: Pick<Config, 'vaultKeys' | 'vaultActiveKey' | 'vaultDevKeyFile'>, log: Pick<Log, 'warn'>): KeyRing {
  if (config.vaultKeys.length > 0) return createAesGcmKeyRing({ keys: config.vaultKeys, activeKeyId: config.vaultActiveKey, configured: true });
  const file = config.vaultDevKeyFile;
  let material: string | undefined;
  try {
    material = readFileSync(file, 'utf8').trim();
  } catch (err) {
    // Only a missing file is made; one that cannot be read (another user's, say root's in a run directory root made)
    // must not be replaced by a new key, under which the saved test cards would be unreadable.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw devKeyFileError(file, 'read', err);
  }
  if (material === undefined) {
    material = randomBytes(32).toString('base64');
    try {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${material}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw devKeyFileError(file, 'create', err);
      // Another process of this installation generated it first: use that one.
      try {
        material = readFileSync(file, 'utf8').trim();
      } catch (again) {
        throw devKeyFileError(file, 'read', again);
      }
    }
    log.warn(`VAULT_KEYS is not set: generated a development vault key in ${config.vaultDevKeyFile}. Test-mode cards are encrypted under it; live-mode vaulting is refused until VAULT_KEYS is configured (docs/recurring.md). Losing this file makes the saved test cards unreadable.`);
  }
  return createAesGcmKeyRing({ keys: [{ id: DEV_KEY_ID, secret: Buffer.from(material, 'base64') }], configured: false });
}

/** Why the development key file cannot be used, in one line that names the file and what to do. */
function devKeyFileError(file: string, doing: 'read' | 'create', err: unknown): StartupError {
  const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  const whose = code === 'EACCES' || code === 'EPERM' ? ownerOf(doing === 'read' ? file : dirname(file)) : undefined;
  return new StartupError(
    `cannot ${doing} the development vault key ${resolve(file)} (${code}${whose === undefined ? '' : `; ${doing === 'read' ? 'the file' : 'its directory'} belongs to uid ${whose}, this process runs as uid ${process.getuid?.()}`}). ` +
      'Run the command as the user who made it, give it to your user (chown), or set VAULT_KEYS (docs/recurring.md); pointing VAULT_DEV_KEY_FILE at a new file makes the test cards saved under the old key unreadable.',
  );
}

function ownerOf(file: string): number | undefined {
  try {
    return statSync(file).uid;
  } catch {
    return undefined;
  }
}

/** A key ring that lives as long as the process (tests, and tools that never vault): test mode only. */
export function ephemeralKeyRing(): KeyRing {
  return createAesGcmKeyRing({ keys: [{ id: 'ephemeral', secret: randomBytes(32) }], configured: false });
}
