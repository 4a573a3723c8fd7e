import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The default output, then one line: passed, failed, skipped, and each suite skipped for a missing requirement, with why.
    reporters: ['default', './test/support/skip-summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.spec.ts', 'gateway/**/*.spec.ts', 'sdk/**/*.spec.ts'],
          // The specs beside the code touch no server and leave no state behind (fake timers and stubbed globals are
          // restored in their own hooks), so they share workers: a fresh worker and module graph for each of ~60 small
          // files cost more than the specs themselves (about 45 s of a 2-core run, against 10 s shared).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          // Once per run: the Postgres the tests use (TEST_POSTGRES_URL, the machine's, or an embedded one) and the NATS
          // (TEST_NATS_URL, the machine's, or none); a server a variable names that does not answer stops the run with one message.
          globalSetup: ['test/support/global-setup.ts'],
          // Each integration file makes its own database and stream names, so files may run side by side; each keeps a
          // worker of its own, as the suites spy on prototypes and start services whose modules hold state.
          isolate: true,
        },
      },
    ],
  },
});
