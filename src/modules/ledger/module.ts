import { PostgresLedgerJournal } from './adapters/postgres/postgres-ledger.ts';
import type { LedgerScope } from './ports/ledger-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { PostgresLedgerAudit } from './adapters/postgres/postgres-ledger.ts';
import type { LedgerAudit } from './ports/ledger.port.ts';
import type { ModuleContext } from '../../kernel/module-manifest.ts';

/** The ledger module's parts for the composition root: its repositories in a transaction. */
export const LEDGER_MODULE = {
  name: 'ledger',
  postgresScope: (db): LedgerScope => ({ ledger: new PostgresLedgerJournal(db) }),
} satisfies ModuleManifest;

/** Wires the ledger's reads: balances and the invariants (`checkout ledger verify`, the balance service). */
export function wireLedger(context: Pick<ModuleContext, 'knex'>): { readonly audit: LedgerAudit } {
  return { audit: new PostgresLedgerAudit(context.knex) };
}
