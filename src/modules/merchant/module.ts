import { PostgresMerchantRepository } from './adapters/postgres/postgres-merchant-repository.ts';
import { MERCHANT_ERRORS } from './errors.ts';
import type { MerchantScope } from './ports/merchant-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The merchant module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const MERCHANT_MODULE = {
  name: 'merchant',
  postgresScope: (db): MerchantScope => ({ merchants: new PostgresMerchantRepository(db) }),
  errors: MERCHANT_ERRORS,
} satisfies ModuleManifest;
