import { PostgresOrderRepository } from './adapters/postgres/postgres-order-repository.ts';
import { ORDER_ERRORS } from './errors.ts';
import type { OrderScope } from './ports/order-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The order module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const ORDER_MODULE = {
  name: 'order',
  postgresScope: (db): OrderScope => ({ orders: new PostgresOrderRepository(db) }),
  errors: ORDER_ERRORS,
} satisfies ModuleManifest;
