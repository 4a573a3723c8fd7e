import type { Knex } from 'knex';
import type { ConnectRouter, ServiceImpl } from '@connectrpc/connect';
import type { DescService } from '@bufbuild/protobuf';
import type { TransactionScope, UnitOfWork } from './ports/unit-of-work.port.ts';
import type { ErrorTable } from './application/error-mapping.ts';
import type { Clock } from './ports/clock.port.ts';
import type { IdGenerator } from './ports/id-generator.port.ts';
import type { Metrics } from './ports/metrics.port.ts';
import type { Idempotent } from './application/idempotent.ts';

/** A module's repositories on one transaction (or, for runAlone, on the pool), in Postgres. */
export type PostgresScopeFactory<S extends Partial<TransactionScope> = Partial<TransactionScope>> = (db: Knex | Knex.Transaction) => S;

/** An id prefix and the Postgres table of the objects whose ids begin with it. */
export type ObjectTable = readonly [prefix: string, table: string];

/** Which credentials a Connect service's calls carry: a secret key, a publishable key, or none (the checkout id or link is the credential). */
export type Credentials = 'secret' | 'publishable' | 'none';

/** Wraps a service's implementation in the request guard, judging `credentials` before a malformed request is explained. */
export type GuardService = <S extends DescService>(service: S, impl: ServiceImpl<S>, credentials: Credentials) => ServiceImpl<S>;

/** One Connect service of a module, with its credentials rule, ready to be registered on a router. */
export interface ConnectServiceEntry {
  readonly register: (router: ConnectRouter, guard: GuardService) => void;
}

/** A Connect service of a module, registered behind the guard with its credentials rule. */
export function connectService<S extends DescService>(service: S, impl: ServiceImpl<S>, credentials: Credentials): ConnectServiceEntry {
  return { register: (router, guard) => router.service(service, guard(service, impl, credentials)) };
}

/**
 * What every module's wiring may use: the database, the unit of work, time and ids, idempotency
 * keys. The merchant module adds the callers' authentication (`authenticate`) by declaration
 * merging, so the kernel names no module.
 */
export interface ModuleContext {
  readonly knex: Knex;
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly idempotent: Idempotent;
  /** A fault of ours, logged; `requestId` when there is one. */
  readonly onInternalError: (err: unknown, requestId?: string) => void;
  readonly metrics?: Metrics;
}

/** What a module's wiring gives the core: its Connect services (more, such as workers' use cases, by its own wire function's type). */
export interface ModuleWiring {
  readonly services: readonly ConnectServiceEntry[];
}

/**
 * What a module (src/modules/<m>/module.ts) gives the composition root: its part of every
 * transaction, its error codes' mappings and, for a module that needs only the shared
 * context, its wiring. The list of them, src/composition/modules.ts, is the one place a new
 * module is registered; the unit of work, the error table and the Connect routes are
 * composed from it, and the typecheck fails when a part is missing (a scope repository no
 * module builds, an error code no table maps). Modules that need other modules' use cases
 * (the payment engine and those built on it) are wired by their own wire functions, in
 * order, in src/composition/core.ts.
 */
export interface ModuleManifest {
  /** The module's folder name under src/modules. */
  readonly name: string;
  /** Its repositories bound to one transaction: its part of TransactionScope. */
  readonly postgresScope?: PostgresScopeFactory;
  /** Its error codes (domain and application), each mapped once. */
  readonly errors?: ErrorTable;
  /**
   * The tables of the objects a call may name by id, by the id's prefix (each with id, merchant_id
   * and livemode): a not-found answer then says when the id is the merchant's in the other mode.
   */
  readonly postgresObjectTables?: readonly ObjectTable[];
  /** Its use cases and Connect services over the shared context alone. */
  readonly wire?: (context: ModuleContext) => ModuleWiring;
}
