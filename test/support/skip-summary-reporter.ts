// The run's last line: how many tests passed, failed and were skipped, and which suites were skipped for a
// requirement this machine lacks, with the reason (test/support/requirements.ts), e.g.
//   tests: 812 passed, 0 failed, 31 skipped: nats-cluster (no nats-server on PATH), checkout-e2e (no Chromium at /usr/bin/chromium)
// With CHECKOUT_TEST_REQUIRE_ALL=1 (.ci/run: CI has everything) any such skip fails the run.
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export default class SkipSummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    let brokenFiles = 0;
    const skips = new Map<string, Set<string>>();
    for (const module of modules) {
      const file = path.basename(module.moduleId).replace(/\.(test|spec)\.ts$/, '');
      const note = (missing: readonly string[] | undefined) => {
        for (const reason of missing ?? []) skips.set(file, (skips.get(file) ?? new Set()).add(reason));
      };
      for (const suite of module.children.allSuites()) note(suite.meta().missing);
      let tests = 0;
      for (const test of module.children.allTests()) {
        tests += 1;
        note(test.meta().missing);
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else if (state === 'skipped') skipped += 1;
      }
      if (tests === 0 && module.state() === 'failed') brokenFiles += 1;
    }
    const named = [...skips].map(([file, reasons]) => `${file} (${[...reasons].join('; ')})`);
    process.stdout.write(
      `tests: ${passed} passed, ${failed} failed, ${skipped} skipped${named.length > 0 ? `: ${named.join(', ')}` : ''}` +
        `${brokenFiles > 0 ? ` (and ${brokenFiles} file${brokenFiles === 1 ? '' : 's'} failed to load)` : ''}\n`,
    );
    if (process.env.CHECKOUT_TEST_REQUIRE_ALL === '1' && named.length > 0) {
      process.stdout.write(`CHECKOUT_TEST_REQUIRE_ALL=1: this machine must run every suite, and ${named.length} file${named.length === 1 ? ' was' : 's were'} skipped in part or whole.\n`);
      process.exitCode = 1;
    }
  }
}
