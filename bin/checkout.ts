#!/usr/bin/env node
// The operator's command line: `checkout serve`, `checkout migrate`, `checkout sandbox create --name "Acme"`,
// `checkout keys create --merchant mer_… --mode live`.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../src/composition/config.ts';
import { createCore, type Core } from '../src/composition/core.ts';
import { DomainError } from '../src/kernel/domain/domain-error.ts';
import { startService, startWorkerProcess, type RunningService, type StopOptions } from '../server/service.ts';
import { StartCancelledError } from '../src/composition/events.ts';
import type { StopOutcome } from '../src/composition/shutdown.ts';
import { whenNpxExits } from '../sdk/cli/npx-parent.ts';
import { migrateDatabase, openDatabase, redactUrl, revertLastMigration, StartupError } from '../src/composition/startup.ts';
import { chooseDatabase, type ChosenDatabase } from '../src/composition/dependencies.ts';
import { loadKeyRing } from '../src/composition/vault-keys.ts';
import { parseWorkerNames, WORKER_NAMES, WORKER_ROLES, type WorkerName } from '../src/composition/worker-names.ts';

const USAGE = `Usage:
  checkout serve                                   start the service (migrates first): the API and the
                                                   workers SERVE_WORKERS names (all by default)
  checkout worker --only NAME[,NAME…]              run some workers in a process of their own:
${WORKER_NAMES.map((name) => `                                                     ${name.padEnd(11)}${WORKER_ROLES[name]}`).join('\n')}
  checkout dispatch                                the same as: checkout worker --only dispatcher
  checkout migrate [--down]                        run database migrations (with the vault's keys: 025 seals
                                                   the webhook signing secrets); --down reverts the last one
  checkout sandbox create --name NAME [--settlement-currency EUR]
                                                   create a sandbox merchant and print its test and live
                                                   keys (shown once)
  checkout keys create --merchant mer_… --mode test|live
                                                   issue a further secret and publishable key for a
                                                   merchant and print them (shown once)
  checkout keys rotate [--batch-size N]            re-wrap every vault data key (cards, tokens, webhook signing
                                                   secrets) under the active key (VAULT_ACTIVE_KEY, or the first
                                                   of VAULT_KEYS), in batches, while the service runs; seals a
                                                   signing secret an earlier release stored in clear; prints
                                                   the counts per key id
  checkout ledger verify                           check every invariant of the ledger (docs/money.md);
                                                   exits 1 naming the first one broken
  checkout listen --forward-to URL [--api-key sk_test_…] [--api-base URL]
                                                   forward your test events to a local URL, signed

Configuration comes from the environment: DATABASE_URL (unset: the embedded Postgres in .checkout/postgres),
NATS_URL, PORT, PUBLIC_URL, CHECKOUT_URL (see README.md).`;

/**
 * Runs work on the configured Postgres: DATABASE_URL's, or without it the embedded one, joined when `checkout serve`
 * (or another command) runs it, else started for this command and stopped after it, also on SIGINT and SIGTERM.
 * Which embedded server it used goes to standard error: standard output is the command's answer.
 */
async function withDatabase<T>(work: (database: ChosenDatabase) => Promise<T>): Promise<T> {
  const database = await chooseDatabase(loadConfig(), (line) => process.stderr.write(`checkout: ${line}\n`));
  const interrupted = (signal: NodeJS.Signals) => {
    void database.release().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  if (database.embedded) {
    process.stderr.write(`checkout: Postgres: ${database.description}\n`);
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
  }
  try {
    return await work(database);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await database.release();
  }
}

/** Runs an operator command against the core over the configured database, migrated first. */
async function withCore<T>(work: (core: Core, database: ChosenDatabase) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { publicUrl, checkoutUrl } = config;
  const keyRing = loadKeyRing(config, { warn: (line) => process.stderr.write(`checkout: ${line}\n`) });
  return withDatabase(async (database) => {
    const knex = await openDatabase(database.url, 2, true, keyRing);
    try {
      return await work(createCore({ knex, keyRing, apiBaseUrl: publicUrl, checkoutHost: checkoutUrl, onInternalError: () => undefined }), database);
    } finally {
      await knex.destroy();
    }
  });
}

/** A started long-running command (serve, worker, dispatch). */
interface Stoppable {
  close(options: StopOptions): Promise<StopOutcome>;
}

/** A signal repeated within this is the same request to stop: npm passes on the Ctrl-C that the terminal also sent to its child. */
const REPEAT_MS = 1000;
/** How long after the grace the last-resort exit comes, should a started process's stop not keep to the grace itself. */
const BACKSTOP_MS = 1000;

/**
 * Runs a long-running command until SIGINT or SIGTERM (or, started by npx,
 * until npx exits). The first stops it within SHUTDOWN_GRACE_MS: exit 0 when
 * everything finished in time, 1 when the grace ran out (docs/operations.md#stopping).
 * A second signal, a second or more after the first, exits at once with 1.
 * Resolves with an exit code when the start was stopped, else -1 (the process runs on).
 */
async function runUntilStopped(graceMs: number, start: (stopSignal: AbortSignal) => Promise<Stoppable>, started?: (running: Stoppable) => void): Promise<number> {
  const stopping = new AbortController();
  let firstSignalAt: number | undefined;
  let running: Stoppable | undefined;
  const stop = async (reason: string) => {
    if (firstSignalAt !== undefined) {
      if (performance.now() - firstSignalAt < REPEAT_MS) return;
      process.stderr.write(`checkout: ${reason} while stopping: exiting at once, abandoning what was in hand\n`);
      process.exit(1);
    }
    firstSignalAt = performance.now();
    stopping.abort();
    // Whatever the process is doing, it ends with the grace. Once started, its stop keeps to the grace by itself
    // and logs the outcome; this is a last resort then. While starting, this is what ends a start that hangs.
    setTimeout(() => {
      process.stderr.write(`checkout: not stopped within SHUTDOWN_GRACE_MS (${graceMs} ms): exiting, abandoning what was in hand\n`);
      process.exit(1);
    }, running ? graceMs + BACKSTOP_MS : graceMs);
    // Still starting: the start ends (a worker waiting for NATS) or completes, and is stopped then (below).
    if (running) await closeAndExit(running, reason, graceMs);
  };
  const closeAndExit = async (what: Stoppable, reason: string, withinMs: number) => {
    const outcome = await what.close({ graceMs: withinMs, reason });
    process.exit(outcome === 'clean' ? 0 : 1);
  };
  // Listening before start-up, not after: as PID 1 in a container an unhandled SIGTERM is ignored, so one sent
  // while the process migrates or waits for NATS would be lost.
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  whenNpxExits(() => void stop('npx exited'));
  try {
    running = await start(stopping.signal);
  } catch (err) {
    if (err instanceof StartCancelledError) return 0;
    throw err;
  }
  started?.(running);
  // Stopped while starting: what is left of the grace, ending a moment before the backstop so that the stop's own outcome decides.
  if (firstSignalAt !== undefined) await closeAndExit(running, 'stopped while starting', Math.max(1, Math.floor(graceMs - (performance.now() - firstSignalAt) - Math.min(BACKSTOP_MS, graceMs / 10))));
  return -1;
}

/** Runs workers in this process until SIGINT or SIGTERM. */
async function runWorkers(names: readonly WorkerName[]): Promise<number> {
  const config = loadConfig();
  return runUntilStopped(config.shutdownGraceMs, (stopSignal) => startWorkerProcess(config, names, { stopSignal }));
}

async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  // Read when a command needs it, so that `checkout --help` works whatever the environment holds.
  const config = () => loadConfig();
  switch (command) {
    case 'serve': {
      const settings = config();
      return runUntilStopped(
        settings.shutdownGraceMs,
        () => startService(settings),
        (running) => {
          const service = running as RunningService;
          if (!service.firstSandbox) return;
          process.stdout.write(
            `First start: created a sandbox merchant with test keys only. Keep them; they are not shown again.\n` +
              `For live keys run: npx checkout keys create --merchant ${service.firstSandbox.merchant_id} --mode live\n` +
              `${JSON.stringify(service.firstSandbox, null, 2)}\n`,
          );
        },
      );
    }
    case 'dispatch':
      return runWorkers(['dispatcher']);
    case 'worker': {
      const { values } = parseArgs({ args: argv.slice(1), options: { only: { type: 'string' } } });
      if (!values.only) {
        process.stderr.write(`worker needs --only with one or more of: ${WORKER_NAMES.join(', ')} (or all)\n`);
        return 2;
      }
      let names: WorkerName[];
      try {
        names = parseWorkerNames(values.only);
      } catch (err) {
        process.stderr.write(`checkout: ${(err as Error).message}\n`);
        return 2;
      }
      return runWorkers(names);
    }
    case 'migrate': {
      const { values } = parseArgs({ args: argv.slice(1), options: { down: { type: 'boolean', default: false } } });
      const keyRing = loadKeyRing(config(), { warn: (line) => process.stderr.write(`checkout: ${line}\n`) });
      if (values.down) {
        const reverted = await withDatabase((database) => revertLastMigration(database.url, keyRing));
        process.stdout.write(reverted.length ? `Reverted: ${reverted.join(', ')}\n` : 'No migration to revert.\n');
        return 0;
      }
      const applied = await withDatabase((database) => migrateDatabase(database.url, keyRing));
      process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Already up to date.\n');
      return 0;
    }
    case 'sandbox': {
      if (sub !== 'create') break;
      const { values } = parseArgs({ args: rest, options: { name: { type: 'string' }, 'settlement-currency': { type: 'string', default: 'EUR' } } });
      if (!values.name) {
        process.stderr.write('sandbox create needs --name "Your shop"\n');
        return 2;
      }
      const credentials = await withCore((core) => core.createSandbox({ name: values.name!, settlementCurrency: values['settlement-currency'] }));
      process.stdout.write(`${JSON.stringify(credentials, null, 2)}\n`);
      return 0;
    }
    case 'keys': {
      if (sub === 'rotate') {
        const { values } = parseArgs({ args: rest, options: { 'batch-size': { type: 'string', default: '500' } } });
        const batchSize = Number(values['batch-size']);
        if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
          process.stderr.write('keys rotate --batch-size must be an integer from 1 to 10000\n');
          return 2;
        }
        return withCore(async (core) => {
          const report = await core.rotateVaultKeys({ batchSize, onBatch: (n) => process.stdout.write(`re-wrapped ${n} data keys\n`) });
          const counts = (c: Readonly<Record<string, number>>) => Object.entries(c).map(([id, n]) => `${id}: ${n}`).join(', ') || 'none';
          process.stdout.write(
            (report.sealed > 0 ? `keys rotate: sealed ${report.sealed} webhook signing secrets an earlier release stored in clear\n` : '') +
              `keys rotate: active key ${report.activeKeyId}; re-wrapped ${report.rewrapped} data keys in ${report.batches} batches (no card number decrypted)\n` +
              `data keys per key id before: ${counts(report.before)}\nafter: ${counts(report.after)}\n`,
          );
          const left = Object.entries(report.after).filter(([id, n]) => id !== report.activeKeyId && n > 0);
          if (left.length === 0) process.stdout.write('Every data key is wrapped by the active key: the other keys may now be removed from VAULT_KEYS.\n');
          return 0;
        });
      }
      if (sub !== 'create') break;
      const { values } = parseArgs({ args: rest, options: { merchant: { type: 'string' }, mode: { type: 'string' } } });
      if (!values.merchant || !/^mer_[0-9A-Za-z]+$/.test(values.merchant)) {
        process.stderr.write('keys create needs --merchant mer_… (the merchant_id that sandbox create printed)\n');
        return 2;
      }
      if (values.mode !== 'test' && values.mode !== 'live') {
        process.stderr.write('keys create needs --mode test or --mode live\n');
        return 2;
      }
      return withCore(async (core, database) => {
        const issued = await core.issueApiKeys({ merchantId: values.merchant!, livemode: values.mode === 'live' });
        if (!issued) {
          process.stderr.write(`checkout: no merchant ${values.merchant} in the database at ${database.description}.\n`);
          return 1;
        }
        process.stdout.write(`${JSON.stringify(issued, null, 2)}\n`);
        return 0;
      });
    }
    case 'ledger': {
      if (sub !== 'verify') break;
      return withCore(async (core) => {
        const broken = await core.ledger.verify();
        if (broken) {
          process.stderr.write(`checkout: ledger invariant broken: ${broken.invariant}: ${broken.detail}\n`);
          return 1;
        }
        process.stdout.write('ledger: every invariant holds\n');
        return 0;
      });
    }
    case 'listen': {
      // Merchant-side: talks to a running service over its API, needs no database settings.
      const { runListen } = await import('../sdk/cli/listen.ts');
      return runListen(argv.slice(1));
    }
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
  }
  process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof ConfigError || err instanceof StartupError || err instanceof DomainError) {
      process.stderr.write(`checkout: ${err.message}\n`);
    } else if (String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) {
      process.stderr.write(`checkout: ${(err as Error).message}\n\n${USAGE}\n`);
      process.exit(2);
    } else if ((err as { code?: string }).code === 'ECONNREFUSED' || (err as Error).name === 'KnexTimeoutError') {
      const url = process.env.DATABASE_URL?.trim();
      process.stderr.write(url ? `checkout: cannot reach Postgres at ${redactUrl(url)}. Start it or set DATABASE_URL.\n` : 'checkout: cannot reach the embedded Postgres (DATABASE_URL is not set); see .checkout/postgres/postgres.log.\n');
    } else {
      process.stderr.write(`checkout: ${(err as Error).stack ?? String(err)}\n`);
    }
    process.exit(1);
  },
);
