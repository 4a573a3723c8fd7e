import type { PaymentAttempt } from '../domain/payment-attempt.entity.ts';
import type { AfterCommit, TransactionScope, UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { RouteRegistry } from './route-registry.ts';

/** Authorizations released inside a transaction, voided at their acquirer once it commits. */
export type Release = (leg: PaymentAttempt) => void;

/** Releasing authorizations at their acquirers, after the transaction that released them commits. */
export interface AcquirerRelease {
  /** Runs work in one transaction; the authorizations it released are voided after the commit. */
  inTransaction<T>(work: (tx: TransactionScope, release: Release) => Promise<T>): Promise<T>;
  /** The Release of a transaction someone else opened (an idempotent call's): voids after its commit. */
  releaseAfter(afterCommit: AfterCommit): Release;
  /** Releases authorizations at their acquirers; a failure leaves a hold that lapses by itself. */
  voidAll(legs: readonly PaymentAttempt[]): Promise<void>;
}

/** Builds the release over the unit of work and the processors of the routes. */
export function createAcquirerRelease(deps: {
  readonly uow: UnitOfWork;
  readonly routes: Pick<RouteRegistry, 'processorOf'>;
  /** A release at an acquirer that failed. */
  readonly onBackgroundError: (err: unknown) => void;
}): AcquirerRelease {
  async function voidAll(legs: readonly PaymentAttempt[]): Promise<void> {
    await Promise.all(
      legs.map(async (leg) => {
        const processor = deps.routes.processorOf(leg.route);
        if (!processor || !leg.processorRef) return;
        try {
          // Pending (accepted, answered later) is fine: nothing more to do from here.
          const released = await processor.void(leg.processorRef, `${leg.id}/void`);
          if (released.kind === 'failed') throw new Error(`void of ${leg.id} on ${leg.route} failed: ${released.declineCode} (${released.processorCode})`);
        } catch (err) {
          deps.onBackgroundError(err);
        }
      }),
    );
  }
  const releaseAfter = (afterCommit: AfterCommit): Release => (leg) => afterCommit(() => voidAll([leg]));
  return {
    inTransaction: (work) => deps.uow.run((tx, afterCommit) => work(tx, releaseAfter(afterCommit))),
    releaseAfter,
    voidAll,
  };
}
