import type { Knex } from 'knex';
import type { TransactionScope } from './ports/unit-of-work.port.ts';
import type { ErrorTable } from './application/error-mapping.ts';

/** A module's repositories on one transaction (or, for runAlone, on the pool), in Postgres. */
export type PostgresScopeFactory<S extends Partial<TransactionScope> = Partial<TransactionScope>> = (db: Knex | Knex.Transaction) => S;

/**
 * What a module (src/modules/<m>/module.ts) gives the composition root besides its wiring:
 * its part of every transaction and its error codes' mappings. The list of them,
 * src/composition/modules.ts, is the one place a new module is registered; the unit of
 * work and the error table are composed from it, and the typecheck fails when a part is
 * missing (a scope repository no module builds, an error code no table maps).
 */
export interface ModuleManifest {
  /** The module's folder name under src/modules. */
  readonly name: string;
  /** Its repositories bound to one transaction: its part of TransactionScope. */
  readonly postgresScope?: PostgresScopeFactory;
  /** Its error codes (domain and application), each mapped once. */
  readonly errors?: ErrorTable;
}
