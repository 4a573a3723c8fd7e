// `npm pack` of a workspace builds it in place (prepack writes sdk/<package>/dist), so two test files packing at
// once would write the same dist/ together: test/sdk-packages.test.ts and the Medusa suites take turns, by a lock
// directory per repository (mkdir is atomic), with a bound on how long a holder that died can keep it.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LOCK = path.join(tmpdir(), `hosted-checkout-pack-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.lock`);
/** Longer than any pack takes: a lock this old was left by a process that died. */
const STALE_MS = 10 * 60_000;

/** Runs `work` (an `npm pack` in this repository) while no other test file packs. */
export async function whilePackingAlone<T>(work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      const since = statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
