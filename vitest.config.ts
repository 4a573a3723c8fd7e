import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts', 'gateway/**/*.spec.ts', 'sdk/**/*.spec.ts', 'test/**/*.test.ts'],
    // Probes Postgres and NATS once and stops the run with one message when they do not answer.
    globalSetup: ['test/support/global-setup.ts'],
    // Each integration file makes its own database and stream names, so files may run side by side.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
