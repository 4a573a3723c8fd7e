// vitest globalSetup of the projects of test/ (vitest.config.ts: 'in-process' and 'integration'; a run of unit specs
// only starts nothing): once per run, before any test file, which Postgres and NATS the run uses (test-servers.ts),
// handed to every file as TEST_POSTGRES_URL and TEST_NATS_URL:
//   - Postgres: TEST_POSTGRES_URL's, else the machine's on 5432, else an embedded one started here and stopped at the end;
//   - NATS: TEST_NATS_URL's, else the machine's on 4222, else none: the harness's services then send their events
//     through Postgres, and the suites that need JetStream itself are skipped with the reason (requirements.ts).
// Every test file's migrated databases are copies of one migrated here (database.ts: createTemplateDatabase).
// A server a variable names that does not answer stops the run here with one message that says what is missing and
// how to point the tests elsewhere, instead of a bare ECONNREFUSED from every suite.
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createTemplateDatabase } from './database.ts';
import { resolveTestServers, TestServersMissing, type TestNats } from './test-servers.ts';

/** The run's servers, started by the first project's setup and stopped by the last one's teardown. */
interface RunServers {
  readonly ready: Promise<{ nats: TestNats; stop(): Promise<void> }>;
  users: number;
}

// vitest calls this once per project, and may load this module once per project: the run's servers are kept on the process.
const RUN_SERVERS = Symbol.for('checkout.tests.run-servers');
const holder = globalThis as { [RUN_SERVERS]?: RunServers };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = (holder[RUN_SERVERS] ??= { ready: startRunServers(project.config.root), users: 0 });
  run.users += 1;
  const { nats, stop } = await run.ready;
  project.provide('natsMissing', nats.missing);
  return async () => {
    run.users -= 1;
    if (run.users > 0) return;
    delete holder[RUN_SERVERS];
    await stop();
  };
}

async function startRunServers(root: string): Promise<{ nats: TestNats; stop(): Promise<void> }> {
  let servers;
  try {
    servers = await resolveTestServers(process.env, (line) => console.log(`tests: ${line}`));
  } catch (err) {
    if (!(err instanceof TestServersMissing)) throw err;
    // The message is the whole story. Thrown, it would come with a stack into this file, the error's fields
    // and vitest's "No test files found", which bury it; no suite or worker has started, so end here.
    process.stderr.write(`\n${err.message}\n`);
    process.exit(1);
  }
  const { postgres, nats } = servers;
  let template;
  try {
    template = await createTemplateDatabase(postgres.url);
  } catch (err) {
    await postgres.stop();
    throw err;
  }
  // The workers read these (test/support/database.ts, nats-server.ts); they start after this.
  process.env.TEST_POSTGRES_URL = postgres.url;
  process.env.TEST_POSTGRES_TEMPLATE = template.name;
  // Node's on-disk cache of compiled code (Node 22.1 and later), for the workers and every node process the suites
  // start (`checkout serve`, the CLI's commands, fixtures), each compiling the service's module
  // graph: measured here, a start of `checkout --help` took 1.3 s of CPU without it and 0.6 s with it.
  process.env.NODE_COMPILE_CACHE ??= path.join(root, 'node_modules', '.cache', 'node-compile-cache');
  if (nats.url !== undefined) process.env.TEST_NATS_URL = nats.url;
  console.log(`tests: ${postgres.description}`);
  console.log(`tests: ${nats.description}`);
  return {
    nats,
    async stop() {
      await template.drop();
      await postgres.stop();
    },
  };
}
