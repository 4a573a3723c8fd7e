// Builds the SDK package in the current directory: its outDir emptied, then its tsconfig.build.json compiled
// (JavaScript for Node 18+ and .d.ts), then the .d.ts files' relative imports pointed at the .js files beside
// them (tsc rewrites the JavaScript's `./x.ts` imports, not the declarations'; older TypeScripts refuse `.ts`
// there). Each sdk/<package>/package.json runs it as `prepack`, so `npm pack` and `npm publish` build from
// the sources: the built dist/ is never committed (except sdk/fields/dist/*.js, the served scripts).
// A package that depends on another of ours by name (@hosted-checkout/medusa on @hosted-checkout/node) is
// compiled against that one's declarations, so its dependencies are built first when their dist/ is missing or
// older than the SDK's sources.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const RELATIVE_TS = /((?:from|import)\s*\(?\s*)(['"])(\.\.?\/[^'"]*?)\.ts\2/g;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : [full];
  });
}

/** Builds the package at `dir` (its tsconfig.build.json); answers where to and how many files. */
function buildSdkPackage(dir: string): { outDir: string; count: number } {
  const configPath = path.join(dir, 'tsconfig.build.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  if (parsed.errors.length > 0) fail(parsed.errors);
  const outDir = parsed.options.outDir;
  if (!outDir || !path.resolve(outDir).startsWith(path.resolve(dir) + path.sep)) throw new Error(`${configPath}: outDir must be inside the package`);
  rmSync(outDir, { recursive: true, force: true });

  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const result = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length > 0) fail(diagnostics);

  const written = files(outDir);
  for (const file of written) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.d.ts')) {
      writeFileSync(file, text.replace(RELATIVE_TS, '$1$2$3.js$2'));
    } else if (file.endsWith('.js') && RELATIVE_TS.test(text)) {
      throw new Error(`${file} still imports a .ts file: is rewriteRelativeImportExtensions on?`);
    }
    RELATIVE_TS.lastIndex = 0;
  }
  return { outDir, count: written.length };
}

function fail(diagnostics: readonly ts.Diagnostic[]): never {
  const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' };
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  process.exit(1);
}

/** The directories of the packages of ours (sdk/<name>) that the package at `dir` depends on by name. */
function workspaceDependencies(dir: string): string[] {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  return Object.keys(manifest.dependencies ?? {})
    .filter((name) => name.startsWith('@hosted-checkout/'))
    .map((name) => path.join(dir, '..', name.slice('@hosted-checkout/'.length)));
}

/** Whether a package's dist/ is older than a source of the SDK (any .ts under sdk/ outside a dist/), or missing. */
function stale(dir: string): boolean {
  const built = statSync(path.join(dir, 'dist', 'index.js'), { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return true;
  const sdk = path.resolve(dir, '..');
  const newer = (d: string): boolean =>
    readdirSync(d, { withFileTypes: true }).some((entry) =>
      entry.isDirectory() ? entry.name !== 'dist' && entry.name !== 'node_modules' && newer(path.join(d, entry.name)) : entry.name.endsWith('.ts') && statSync(path.join(d, entry.name)).mtimeMs > built,
    );
  return newer(sdk);
}

for (const dependency of workspaceDependencies(process.cwd())) {
  // `npm pack --workspaces` has just built it, unless the sources changed since.
  if (!stale(dependency)) continue;
  const built = buildSdkPackage(dependency);
  console.log(`${path.relative(path.resolve(import.meta.dirname, '..'), dependency)}: ${built.count} files built into ${path.relative(dependency, built.outDir)}/ (a dependency)`);
}
const { outDir, count } = buildSdkPackage(process.cwd());
console.log(`${path.relative(path.resolve(import.meta.dirname, '..'), process.cwd())}: ${count} files built into ${path.relative(process.cwd(), outDir)}/`);
