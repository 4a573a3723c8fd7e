import { PostgresDisputeRepository } from './adapters/postgres/postgres-dispute-repository.ts';
import { PostgresEvidenceRepository } from './adapters/postgres/postgres-evidence-repository.ts';
import { DISPUTE_ERRORS } from './errors.ts';
import type { DisputeScope } from './ports/dispute-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The dispute module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const DISPUTE_MODULE = {
  name: 'dispute',
  postgresScope: (db): DisputeScope => ({ disputes: new PostgresDisputeRepository(db), evidence: new PostgresEvidenceRepository(db) }),
  errors: DISPUTE_ERRORS,
} satisfies ModuleManifest;
