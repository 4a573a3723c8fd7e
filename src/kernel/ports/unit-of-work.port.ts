import type { RequestLedger } from './idempotency-store.port.ts';

/**
 * The repositories bound to one transaction: what a use case changes, and
 * the outbox its events go to, commit together or not at all. The kernel's
 * part is here; each module adds its own from src/modules/<m>/ports/<m>-scope.port.ts
 * (declaration merging: `interface TransactionScope extends RefundScope {}`), so the
 * scope is the intersection of the modules' scopes without this file naming them.
 * The Postgres unit of work builds it from the modules' factories (src/composition/modules.ts).
 */
export interface TransactionScope {
  /** Idempotency keys, claimed and completed in the transaction of the work they guard. */
  readonly requests: RequestLedger;
}

/**
 * Schedules work to run once the transaction has committed (never when it
 * rolled back): releasing an authorization at its acquirer, say. The call
 * answers after its tasks have run; a task handles its own failures (the
 * state it follows is committed already).
 */
export type AfterCommit = (task: () => Promise<void>) => void;

/** Runs work in one database transaction: all of it commits, or none; its after-commit tasks run once it has. */
export interface UnitOfWork {
  run<T>(work: (tx: TransactionScope, afterCommit: AfterCommit) => Promise<T>): Promise<T>;
  /**
   * Runs one repository call that is atomic on its own (a single statement, as each PaymentRepository
   * change is) without a transaction around it: no BEGIN and COMMIT, two round trips fewer. Anything
   * that makes two calls, or reads then writes, belongs in run().
   */
  runAlone<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T>;
}
