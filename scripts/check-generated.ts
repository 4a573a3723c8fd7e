// Fails when src/gen or sdk/gen is not what `buf generate` makes of proto/, and runs
// `buf breaking` against main once main has contracts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const buf = path.join(root, 'node_modules', '.bin', 'buf');

function files(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full, path.join(prefix, name)) : [path.join(prefix, name)];
  });
}

const out = mkdtempSync(path.join(tmpdir(), 'checkout-gen-'));
let failed = false;
try {
  execFileSync(buf, ['generate', '--output', out], { cwd: root, stdio: 'inherit' });
  for (const dir of [path.join('src', 'gen'), path.join('sdk', 'gen')]) {
    const fresh = path.join(out, dir);
    const committed = path.join(root, dir);
    const want = files(fresh).sort();
    const have = files(committed).sort();
    const stale = [...new Set([...want, ...have])].filter(
      (file) => !want.includes(file) || !have.includes(file) || !readFileSync(path.join(fresh, file)).equals(readFileSync(path.join(committed, file))),
    );
    if (stale.length > 0) {
      failed = true;
      console.error(`${dir} is stale; run \`npm run generate\` and commit. Differs: ${stale.join(', ')}`);
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}

// buf breaking against main, when main exists and already holds contracts.
function mainHasProto(): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', 'main:proto'], { cwd: root, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const mainHasContracts = mainHasProto();
if (mainHasContracts) {
  try {
    execFileSync(buf, ['breaking', '--against', '.git#branch=main,subdir=proto'], { cwd: root, stdio: 'inherit' });
  } catch {
    failed = true;
    console.error('buf breaking: the contracts break compatibility with main.');
  }
}
if (failed) process.exit(1);
console.log(`generated code is fresh${mainHasContracts ? '; buf breaking against main passed' : ''}`);
