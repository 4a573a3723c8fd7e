import type { Knex } from 'knex';
import type { TransactionScope } from '../kernel/ports/unit-of-work.port.ts';
import type { ErrorCode } from '../kernel/application/error-mapping.ts';
import type { CompleteErrorTable } from '../kernel/application/connect-errors.ts';
import type { ModuleManifest, ObjectTable } from '../kernel/module-manifest.ts';
import { KERNEL_MODULE } from '../kernel/module.ts';
import { MERCHANT_MODULE } from '../modules/merchant/module.ts';
import { ORDER_MODULE } from '../modules/order/module.ts';
import { CHECKOUT_MODULE } from '../modules/checkout/module.ts';
import { PAYMENT_MODULE } from '../modules/payment/module.ts';
import { CAPTURE_MODULE } from '../modules/capture/module.ts';
import { VOID_MODULE } from '../modules/void/module.ts';
import { REFUND_MODULE } from '../modules/refund/module.ts';
import { DISPUTE_MODULE } from '../modules/dispute/module.ts';
import { LEDGER_MODULE } from '../modules/ledger/module.ts';
import { PAYOUT_MODULE } from '../modules/payout/module.ts';
import { CUSTOMER_MODULE } from '../modules/customer/module.ts';
import { SUBSCRIPTION_MODULE } from '../modules/subscription/module.ts';
import { PAYMENT_LINK_MODULE } from '../modules/payment-link/module.ts';
import { EVENT_MODULE } from '../modules/event/module.ts';
import { WEBHOOK_MODULE } from '../modules/webhook/module.ts';
import { TEST_HELPERS_MODULE } from '../modules/test-helpers/module.ts';

/**
 * Every module, once: the one list a new module is added to. The unit of work's scope
 * and the error table are composed from it, and checked complete below.
 */
export const MODULES = [
  KERNEL_MODULE,
  MERCHANT_MODULE,
  ORDER_MODULE,
  CHECKOUT_MODULE,
  PAYMENT_MODULE,
  CAPTURE_MODULE,
  VOID_MODULE,
  REFUND_MODULE,
  DISPUTE_MODULE,
  LEDGER_MODULE,
  PAYOUT_MODULE,
  CUSTOMER_MODULE,
  SUBSCRIPTION_MODULE,
  PAYMENT_LINK_MODULE,
  EVENT_MODULE,
  WEBHOOK_MODULE,
  TEST_HELPERS_MODULE,
] as const satisfies readonly ModuleManifest[];

type Module = (typeof MODULES)[number];
type UnionToIntersection<U> = (U extends unknown ? (part: U) => void : never) extends (whole: infer I) => void ? I : never;
/** The scope the listed modules' factories build, together. */
type BuiltScope = UnionToIntersection<ReturnType<Extract<Module, { postgresScope: unknown }>['postgresScope']>>;
/** Every code the listed modules' tables map, together. */
type MappedCode = keyof UnionToIntersection<Extract<Module, { errors: unknown }>['errors']>;

// The typecheck fails here, naming what is missing, when a module merges a repository into
// TransactionScope or a code into the error registries and no listed module provides it.
type Unbuilt = Exclude<keyof TransactionScope, keyof BuiltScope>;
type Unmapped = Exclude<ErrorCode, MappedCode>;
const everyRepositoryBuilt: [Unbuilt] extends [never] ? true : { readonly unbuilt: Unbuilt } = true;
const everyCodeMapped: [Unmapped] extends [never] ? true : { readonly unmapped: Unmapped } = true;
void everyRepositoryBuilt;
void everyCodeMapped;

/** Every module's repositories on one connection: the Postgres unit of work's scope. */
export function postgresScope(db: Knex | Knex.Transaction): TransactionScope {
  const scope = {};
  for (const module of MODULES) if ('postgresScope' in module) Object.assign(scope, module.postgresScope(db));
  return scope as TransactionScope;
}

/** Every error code with its mapping: the kernel's and each module's tables. */
export const ERRORS: CompleteErrorTable = Object.assign({}, ...MODULES.map((module) => ('errors' in module ? module.errors : {}))) as CompleteErrorTable;

/** The tables of the objects a call may name by id, by prefix: the other-mode hint of a not-found answer. */
export const OBJECT_TABLES: readonly ObjectTable[] = (MODULES as readonly ModuleManifest[]).flatMap((module) => module.postgresObjectTables ?? []);
