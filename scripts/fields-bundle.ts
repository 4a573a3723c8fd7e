// Builds the embedded card fields' browser scripts from their TypeScript sources in sdk/fields/: each entry and
// the modules it imports, transpiled by TypeScript (erasable syntax only), joined in dependency order with their
// import and export keywords removed, inside one IIFE. No bundler dependency: the sources keep to single-line
// relative imports and named top-level declarations, which this checks (a second declaration of one name throws).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Where the sources are, and the scripts built from them. */
export const FIELDS_DIR = path.resolve(import.meta.dirname, '..', 'sdk', 'fields');
export const FIELDS_ENTRIES = { 'fields.js': 'fields.ts', 'frame.js': 'frame.ts' } as const;

const IMPORT = /^import\s+(?:type\s+)?\{[^}]*\}\s+from\s+'(\.\/[\w-]+\.ts)';\s*$/;

function transpile(file: string): { code: string; deps: string[] } {
  const source = readFileSync(path.join(FIELDS_DIR, file), 'utf8');
  const deps: string[] = [];
  for (const line of source.split('\n')) {
    if (/^import\s/.test(line)) {
      const m = IMPORT.exec(line);
      if (!m) throw new Error(`${file}: write imports as one line: import { a } from './x.ts'; got ${line}`);
      if (!/^import\s+type\s/.test(line)) deps.push(m[1]!.slice(2));
    }
  }
  const out = ts.transpileModule(source, {
    fileName: file,
    compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.ESNext, removeComments: true, verbatimModuleSyntax: false, useDefineForClassFields: true },
  }).outputText;
  const code = out
    .split('\n')
    .filter((line) => !/^import\s/.test(line) && !/^export\s*\{\s*\};?$/.test(line))
    .map((line) => {
      if (/^export\s+(default|\{|\*)/.test(line)) throw new Error(`${file}: only named declarations may be exported; got ${line}`);
      return line.replace(/^export\s+/, '');
    })
    .join('\n');
  return { code, deps };
}

/** Builds one entry: its modules in dependency order, in an IIFE, with a header naming the sources. */
export function bundle(entry: string): string {
  const order: string[] = [];
  const parts = new Map<string, string>();
  const visit = (file: string, trail: string[]) => {
    if (parts.has(file)) return;
    if (trail.includes(file)) throw new Error(`import cycle: ${[...trail, file].join(' -> ')}`);
    const { code, deps } = transpile(file);
    for (const dep of deps) visit(dep, [...trail, file]);
    parts.set(file, code);
    order.push(file);
  };
  visit(entry, []);
  const names = new Map<string, string>();
  for (const file of order) {
    for (const m of parts.get(file)!.matchAll(/^(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)/gm)) {
      const seen = names.get(m[1]!);
      if (seen) throw new Error(`${m[1]} is declared at the top of both ${seen} and ${file}; rename one (the modules share one scope in the bundle)`);
      names.set(m[1]!, file);
    }
  }
  const body = order.map((file) => `// ${file}\n${parts.get(file)!.trim()}\n`).join('\n');
  return `// Built from sdk/fields/${entry} by \`npm run build:fields\`; do not edit.\n(function () {\n'use strict';\n${body}})();\n`;
}

/** Every built script, by file name. */
export function bundleFields(): Record<string, string> {
  return Object.fromEntries(Object.entries(FIELDS_ENTRIES).map(([out, entry]) => [out, bundle(entry)]));
}
