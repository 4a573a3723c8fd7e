import { PostgresCustomerRepository } from './adapters/postgres/postgres-customer-repository.ts';
import { PostgresCardVault } from './adapters/postgres/postgres-card-vault.ts';
import { CUSTOMER_ERRORS } from './errors.ts';
import type { CustomerScope } from './ports/customer-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The customer module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const CUSTOMER_MODULE = {
  name: 'customer',
  postgresScope: (db): CustomerScope => ({ customers: new PostgresCustomerRepository(db), vault: new PostgresCardVault(db) }),
  errors: CUSTOMER_ERRORS,
} satisfies ModuleManifest;
