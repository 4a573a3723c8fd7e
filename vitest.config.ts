import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts', 'gateway/**/*.spec.ts', 'sdk/**/*.spec.ts', 'test/**/*.test.ts'],
    // Once per run: the Postgres the tests use (TEST_POSTGRES_URL, the machine's, or an embedded one) and the NATS
    // (TEST_NATS_URL, the machine's, or none); a server a variable names that does not answer stops the run with one message.
    globalSetup: ['test/support/global-setup.ts'],
    // Each integration file makes its own database and stream names, so files may run side by side.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The default output, then one line: passed, failed, skipped, and each suite skipped for a missing requirement, with why.
    reporters: ['default', './test/support/skip-summary-reporter.ts'],
  },
});
