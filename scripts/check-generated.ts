// Fails when src/gen or sdk/gen is not what `buf generate` makes of proto/, or sdk/node/api-types.ts
// is not what scripts/sdk-types.ts makes of the /v1 OpenAPI document, and runs `buf breaking` against
// main once main has contracts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openApiDocument, renderSdkTypes, SDK_TYPES_FILE } from './sdk-types.ts';

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

// The server SDK's types, from the OpenAPI document the TypeBox schemas make.
if (readFileSync(SDK_TYPES_FILE, 'utf8') !== renderSdkTypes(await openApiDocument())) {
  failed = true;
  console.error(`${path.relative(root, SDK_TYPES_FILE)} is stale: the REST schemas changed; run \`npm run generate\` and commit.`);
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
console.log(`generated code and SDK types are fresh${mainHasContracts ? '; buf breaking against main passed' : ''}`);
