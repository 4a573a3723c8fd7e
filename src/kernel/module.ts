import { PostgresRequestLedger } from './adapters/postgres/postgres-idempotency-store.ts';
import { KERNEL_ERRORS } from './application/connect-errors.ts';
import type { ModuleManifest } from './module-manifest.ts';
import type { RequestLedger } from './ports/idempotency-store.port.ts';

/** The kernel's parts: the idempotency keys' ledger in every transaction, and the kernel's own error codes. */
export const KERNEL_MODULE = {
  name: 'kernel',
  postgresScope: (db): { requests: RequestLedger } => ({ requests: new PostgresRequestLedger(db) }),
  errors: KERNEL_ERRORS,
} satisfies ModuleManifest;
