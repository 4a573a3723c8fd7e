import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The suites of test/ that drive the service in their own process only (startTestService: app.inject and the Connect
 * routes, on the run's Postgres) and change nothing outside their own databases: no child process, server, browser or
 * NATS stream, no spy left on a shared module. They share workers ('in-process' below); any other suite, a new one
 * included, gets a worker of its own ('integration') until it is listed here.
 */
const IN_PROCESS = [
  'allowed-values',
  'client-errors',
  'client-secret',
  'database-errors',
  'disputes',
  'expire-order',
  'fuzz',
  'gateway-options',
  'grpc-connect',
  'idempotency-keys',
  'idempotent-transaction',
  'ledger-simulation',
  'manual-capture',
  'openapi',
  'orders-api',
  'other-mode-ids',
  'payment-links',
  'payment-processor.contract',
  'payment-races',
  'payment-routes',
  'payments-entity',
  'payments',
  'payouts',
  'publishable-keys',
  'rate-limits',
  'refunds',
  'settlement',
  'subscriptions',
  'vault',
  'webhook-endpoints',
].map((name) => `test/${name}.test.ts`);

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The default output, then one line: passed, failed, skipped, and each suite skipped for a missing requirement, with why.
    reporters: ['default', './test/support/skip-summary-reporter.ts'],
    // A fresh worker per file costs a process, a fresh import of the module graph and code the JIT has not seen: about
    // 2 s of CPU per file here, more than many files' tests. The files that leave nothing behind share workers; measured
    // on this 2-core machine under load, the 58 unit spec files took 42-50 s isolated and 10-16 s shared, the 27
    // in-process suites (27 then) 180-280 s isolated and 60-90 s shared (CPU 98-107 s against 50-53 s).
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // The specs beside the code touch no server and restore what they stub (fake timers, globals) in their own hooks.
          include: ['src/**/*.spec.ts', 'gateway/**/*.spec.ts', 'sdk/**/*.spec.ts'],
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'in-process',
          include: IN_PROCESS,
          globalSetup: ['test/support/global-setup.ts'],
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...IN_PROCESS],
          // Once per run: the Postgres the tests use (TEST_POSTGRES_URL, the machine's, or an embedded one) and the NATS
          // (TEST_NATS_URL, the machine's, or none); a server a variable names that does not answer stops the run with
          // one message. Both projects of test/ name it; it starts the servers once for both.
          globalSetup: ['test/support/global-setup.ts'],
          // Each integration file makes its own database and stream names, so files may run side by side.
          isolate: true,
        },
      },
    ],
  },
});
