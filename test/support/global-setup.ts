// Once per test run (vitest globalSetup), before any test file: which Postgres the run uses (handed to every file
// as TEST_POSTGRES_URL; an embedded one is started here when none answers, and stopped at the end) and whether the
// NATS at TEST_NATS_URL answers (suites that need it are skipped with the reason when it does not: requirements.ts).
import { connect } from 'nats';
import type { TestProject } from 'vitest/node';
import { MACHINE_NATS_URL } from './nats-server.ts';
import { resolveTestPostgres } from './test-postgres.ts';

/** Why the NATS at url cannot be used, or undefined when it answers. */
export async function probeNats(url: string, timeoutMs = 3000): Promise<string | undefined> {
  try {
    const nc = await connect({ servers: url.split(','), timeout: timeoutMs, reconnect: false });
    await nc.close();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await resolveTestPostgres(process.env, (line) => console.log(`tests: ${line}`));
  // Test files read it when they load (test/support/database.ts); the workers are started with this environment.
  process.env.TEST_POSTGRES_URL = postgres.url;
  const natsFailure = await probeNats(MACHINE_NATS_URL);
  project.provide('natsMissing', natsFailure === undefined ? undefined : `no NATS at ${MACHINE_NATS_URL}`);
  console.log(`tests: ${postgres.description}`);
  console.log(
    natsFailure === undefined
      ? `tests: NATS at ${MACHINE_NATS_URL} (TEST_NATS_URL)`
      : `tests: no NATS answers at ${MACHINE_NATS_URL} (${natsFailure}): the suites that need it are skipped (start nats-server -js, or set TEST_NATS_URL)`,
  );
  return async () => {
    await postgres.stop();
  };
}
