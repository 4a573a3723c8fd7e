// vitest globalSetup: before any suite, decide once which Postgres and NATS the run uses (test-servers.ts).
// Without them every integration suite would fail on its own with a bare ECONNREFUSED; instead the run
// stops here with one message that says what is missing and how to point the tests elsewhere.
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { resolveTestServers, TestServersMissing } from './test-servers.ts';

/** Whether the run includes a suite of test/ (the unit specs beside the code need no server). */
function runsIntegrationSuites(project: TestProject): boolean {
  const root = path.join(project.config.root, 'test') + path.sep;
  // The state API is experimental: when it says nothing, probe.
  const paths = (project.vitest.state as { getPaths?: () => string[] } | undefined)?.getPaths?.() ?? [];
  return paths.length === 0 || paths.some((file) => file.startsWith(root));
}

export default async function setup(project: TestProject): Promise<void> {
  if (!runsIntegrationSuites(project)) return;
  try {
    const { postgresUrl, natsUrl } = await resolveTestServers();
    // The workers read these (test/support/database.ts, nats-server.ts); they start after this.
    process.env.TEST_POSTGRES_URL = postgresUrl;
    process.env.TEST_NATS_URL = natsUrl;
  } catch (err) {
    if (!(err instanceof TestServersMissing)) throw err;
    // The message is the whole story. Thrown, it would come with a stack into this file, the error's fields
    // and vitest's "No test files found", which bury it; no suite or worker has started, so end here.
    process.stderr.write(`\n${err.message}\n`);
    process.exit(1);
  }
}
