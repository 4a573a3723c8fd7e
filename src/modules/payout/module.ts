import { PostgresPayoutRepository } from './adapters/postgres/postgres-payouts.ts';
import { PAYOUT_ERRORS } from './errors.ts';
import type { PayoutScope } from './ports/payout-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The payout module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const PAYOUT_MODULE = {
  name: 'payout',
  postgresScope: (db): PayoutScope => ({ payouts: new PostgresPayoutRepository(db) }),
  errors: PAYOUT_ERRORS,
} satisfies ModuleManifest;
