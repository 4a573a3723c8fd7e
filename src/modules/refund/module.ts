import { PostgresRefundRepository } from './adapters/postgres/postgres-refund-repository.ts';
import { REFUND_ERRORS } from './errors.ts';
import type { RefundScope } from './ports/refund-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The refund module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const REFUND_MODULE = {
  name: 'refund',
  postgresScope: (db): RefundScope => ({ refunds: new PostgresRefundRepository(db) }),
  errors: REFUND_ERRORS,
} satisfies ModuleManifest;
