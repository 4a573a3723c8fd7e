import { PostgresLedgerJournal } from './adapters/postgres/postgres-ledger.ts';
import type { LedgerScope } from './ports/ledger-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The ledger module's parts for the composition root: its repositories in a transaction. */
export const LEDGER_MODULE = {
  name: 'ledger',
  postgresScope: (db): LedgerScope => ({ ledger: new PostgresLedgerJournal(db) }),
} satisfies ModuleManifest;
