// Builds the embedded card fields' browser scripts from their TypeScript sources in sdk/fields/: each entry and
// the modules it imports, bundled and minified by rolldown into one IIFE (no module loader in the browser).
// The output is checked in (sdk/fields/dist/) so the service serves it with no build step at start;
// gateway/fields/fields-routes.spec.ts fails when it drifts from the sources.
import path from 'node:path';
import { build } from 'rolldown';

/** Where the sources are, and the scripts built from them. */
export const FIELDS_DIR = path.resolve(import.meta.dirname, '..', 'sdk', 'fields');
export const FIELDS_ENTRIES = { 'fields.js': 'global.ts', 'frame.js': 'frame.ts' } as const;

/** Builds one entry: its modules bundled, minified, in an IIFE, with a header naming the source. */
export async function bundle(entry: string): Promise<string> {
  const result = await build({
    input: path.join(FIELDS_DIR, entry),
    platform: 'browser',
    write: false,
    logLevel: 'warn',
    // The sources are modules (strict); the IIFE keeps them so.
    output: { format: 'iife', minify: true, comments: false, sourcemap: false, intro: "'use strict';" },
  });
  const chunks = result.output.filter((o) => o.type === 'chunk');
  if (chunks.length !== 1) throw new Error(`${entry}: expected one chunk, got ${chunks.length}`);
  return `// Built from sdk/fields/${entry} by \`npm run build:fields\`; do not edit.\n${chunks[0]!.code}`;
}

/** Every built script, by file name. */
export async function bundleFields(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, entry] of Object.entries(FIELDS_ENTRIES)) out[name] = await bundle(entry);
  return out;
}
