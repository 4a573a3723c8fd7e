// Writes sdk/fields/dist/*.js, the embedded fields' browser scripts the gateway serves; a spec fails when they drift.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleFields, FIELDS_DIR } from './fields-bundle.ts';

const dist = path.join(FIELDS_DIR, 'dist');
mkdirSync(dist, { recursive: true });
for (const [name, code] of Object.entries(await bundleFields())) {
  writeFileSync(path.join(dist, name), code);
  console.log(`sdk/fields/dist/${name}: ${Buffer.byteLength(code)} bytes`);
}
