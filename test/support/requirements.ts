// What a suite needs that a machine may lack. A suite declares it in its options:
//   describe('hosted checkout in a real browser', requires('chromium', 'nats'), () => { … })
// Where something is missing the suite is skipped (its hooks do not run either) and the reason is kept in its
// meta, from which test/support/skip-summary-reporter.ts names every skipped suite and why in one line at the end
// of the run; with CHECKOUT_TEST_REQUIRE_ALL=1 (.ci/run) such a skip fails the run.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { inject, type TestOptions } from 'vitest';
import type { EventsMode } from '../../src/composition/config.ts';
import { CHROMIUM_PATH } from './browser.ts';
import { medusaMissing } from './medusa.ts';
import { findNatsServer, MACHINE_NATS_URL } from './nats-server.ts';
import { PGBOUNCER_BIN, pgbouncerVersion } from './pgbouncer.ts';
import { TEST_POSTGRES_URL } from './database.ts';

/**
 * nats: a NATS with JetStream answering at TEST_NATS_URL (probed once per run by test/support/global-setup.ts), for
 * what tests JetStream itself (a suite that only needs events runs without it: {@link harnessEventsMode});
 * nats-server: the binary, for suites that start servers of their own; chromium: the browser playwright-core drives;
 * pgbouncer: Debian's binary; network-namespaces: `unshare -n` and `ip` (root, or a sandbox that allows them);
 * medusa: a Node for Medusa 2, and its project (test/fixtures/medusa-app) installed in the cache or the npm registry
 * answering to install it (test/support/medusa.ts); postgres-tcp: the run's Postgres answers on host and port, not
 * only on a unix socket as the embedded one does (Medusa's ORM takes host and port from its DATABASE_URL and reaches
 * no socket).
 */
export type Requirement = 'nats' | 'nats-server' | 'chromium' | 'pgbouncer' | 'network-namespaces' | 'medusa' | 'postgres-tcp';

declare module 'vitest' {
  interface TaskMeta {
    /** Why a suite or test was skipped: each requirement it has that this machine lacks. */
    missing?: string[];
  }
  interface ProvidedContext {
    /** Why the NATS at TEST_NATS_URL cannot be used, or undefined when it answered (test/support/global-setup.ts). */
    natsMissing: string | undefined;
  }
}

const checked = new Map<Requirement, string | undefined>();

/** Options for describe/test: skipped, with the reasons recorded, when a requirement is missing here. */
export function requires(...needs: Requirement[]): TestOptions {
  const missing = needs.map(missingReason).filter((reason): reason is string => reason !== undefined);
  return missing.length > 0 ? { skip: true, meta: { missing } } : {};
}

/**
 * What a suite run in one events' mode needs: JetStream needs the NATS of the run, the event stream in Postgres
 * nothing more. For the suites run once per mode (EVENTS_MODES, the contract suites' TRANSPORTS).
 */
export function requiresForEvents(mode: EventsMode | 'jetstream'): TestOptions {
  return mode === 'postgres-outbox' ? {} : requires('nats');
}

/**
 * How the events of a service a test starts without naming a mode travel: through JetStream on the run's NATS when it
 * answers (CI, and this project's machines), else through the event stream in Postgres, so that a suite that needs
 * events, not JetStream, runs on a machine without NATS too.
 */
export function harnessEventsMode(): EventsMode {
  return missingReason('nats') === undefined ? 'nats' : 'postgres-outbox';
}

/**
 * The NATS_URL of a service a test starts without naming an events' mode ({@link harnessEventsMode}): the run's NATS
 * when it answers, else none (events through Postgres).
 */
export function harnessNatsUrl(): string | undefined {
  return harnessEventsMode() === 'nats' ? MACHINE_NATS_URL : undefined;
}

/** Why a requirement is not met on this machine, or undefined when it is. */
export function missingReason(need: Requirement): string | undefined {
  if (!checked.has(need)) checked.set(need, check(need));
  return checked.get(need);
}

function check(need: Requirement): string | undefined {
  switch (need) {
    case 'nats':
      return inject('natsMissing');
    case 'nats-server':
      if (findNatsServer()) return undefined;
      return process.env.NATS_SERVER_BIN ? `no nats-server at NATS_SERVER_BIN=${process.env.NATS_SERVER_BIN}` : 'no nats-server on PATH';
    case 'chromium':
      return executable(CHROMIUM_PATH) ? undefined : `no Chromium at ${CHROMIUM_PATH}`;
    case 'pgbouncer':
      return pgbouncerVersion() ? undefined : `no pgbouncer at ${PGBOUNCER_BIN}`;
    case 'network-namespaces': {
      const run = spawnSync('unshare', ['-n', 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8', timeout: 10_000 });
      if (run.status === 0) return undefined;
      const why = (run.error?.message ?? run.stderr.trim().split('\n').pop()) || `exit ${run.status}`;
      return `no network namespace with loopback here (unshare -n ip link set lo up: ${why})`;
    }
    case 'medusa':
      return medusaMissing();
    case 'postgres-tcp':
      // An embedded Postgres's URL names its socket's directory, percent-encoded, as the host.
      return decodeURIComponent(new URL(TEST_POSTGRES_URL).hostname).startsWith('/') ? "the run's Postgres is the embedded one, on a unix socket only" : undefined;
  }
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
