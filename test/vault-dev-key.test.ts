/**
 * The development vault key (.checkout/vault-dev.key, src/composition/vault-keys.ts) in a run directory another user
 * made: an ordinary user's command gets one line naming the file and what to do, not an EACCES stack, and the file
 * is not replaced by a new key (under which the saved test cards would be unreadable).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { loadKeyRing } from '../src/composition/vault-keys.ts';

const CLI = fileURLToPath(new URL('../bin/checkout.ts', import.meta.url));
const asRoot = process.getuid?.() === 0;
/** nobody: an ordinary user every Debian has. */
const NOBODY = { uid: 65534, gid: 65534 };
const root = mkdtempSync(path.join(tmpdir(), 'checkout-vault-dev-key-'));
chmodSync(root, 0o755);

afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = (file: string) => ({ vaultKeys: [], vaultActiveKey: undefined, vaultDevKeyFile: file });

describe('the development vault key file', () => {
  test('missing: made (mode 0600) and read back by the next start', () => {
    const file = path.join(root, 'fresh', '.checkout', 'vault-dev.key');
    const warnings: string[] = [];
    loadKeyRing(config(file), { warn: (line) => warnings.push(line) });
    expect(warnings).toEqual([expect.stringContaining(`generated a development vault key in ${file}`)]);
    const key = readFileSync(file, 'utf8');
    loadKeyRing(config(file), { warn: (line) => warnings.push(line) });
    expect(warnings).toHaveLength(1);
    expect(readFileSync(file, 'utf8')).toBe(key);
  });

  if (!asRoot) console.log('vault-dev-key: the other user\'s run directory needs root (to run a command as nobody); skipped');
  test.skipIf(!asRoot)('root\'s, in a run directory root made: `checkout migrate` run by an ordinary user says so in one line', () => {
    const run = path.join(root, 'made-by-root');
    mkdirSync(path.join(run, '.checkout'), { recursive: true, mode: 0o755 });
    const file = path.join(run, '.checkout', 'vault-dev.key');
    writeFileSync(file, 'root-made-key\n', { mode: 0o600 });
    const result = spawnSync(process.execPath, [CLI, 'migrate'], {
      cwd: run,
      ...NOBODY,
      encoding: 'utf8',
      // Never reached: the key is read first.
      env: { PATH: process.env.PATH, HOME: run, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', NATS_URL: '' },
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toBe(
      `checkout: cannot read the development vault key ${file} (EACCES; the file belongs to uid 0, this process runs as uid 65534). ` +
        'Run the command as the user who made it, give it to your user (chown), or set VAULT_KEYS (docs/recurring.md); pointing VAULT_DEV_KEY_FILE at a new file makes the test cards saved under the old key unreadable.',
    );
    expect(readFileSync(file, 'utf8')).toBe('root-made-key\n');
  });

  test.skipIf(!asRoot)('in a root-made .checkout it cannot write: one line naming the directory\'s owner', () => {
    const run = path.join(root, 'dir-by-root');
    mkdirSync(path.join(run, '.checkout'), { recursive: true, mode: 0o755 });
    const result = spawnSync(process.execPath, [CLI, 'migrate'], {
      cwd: run,
      ...NOBODY,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: run, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', NATS_URL: '' },
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `checkout: cannot create the development vault key ${path.join(run, '.checkout', 'vault-dev.key')} (EACCES; its directory belongs to uid 0, this process runs as uid 65534). ` +
        'Run the command as the user who made it, give it to your user (chown), or set VAULT_KEYS (docs/recurring.md); pointing VAULT_DEV_KEY_FILE at a new file makes the test cards saved under the old key unreadable.\n',
    );
  });
});
