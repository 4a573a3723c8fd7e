import { markVoided, type AuthorizationRelease } from '../../order/domain/order-transitions.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import { cancel } from '../../payment/domain/payment.entity.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { AcquirerRelease, Release } from '../../payment/application/acquirer-release.ts';

/** Releases up to limit authorizations that ran out (the sweeper's job); answers how many. */
export type ReleaseAuthorizations = (limit: number) => Promise<number>;

/** What voiding an authorization runs on. */
export interface ReleaseAuthorizationDeps {
  readonly clock: Clock;
  readonly eventIds: EventIds;
}

/**
 * Voids an authorized order in `tx` (its row locked by the caller): its authorized payment is
 * canceled, the order becomes voided with order.voided (reason requested or authorization_expired),
 * and the authorization is released at the acquirer once `tx` commits. Nothing was captured, so
 * nothing is posted to the ledger. A release the acquirer misses leaves a hold that lapses by itself.
 */
export async function releaseAuthorization(deps: ReleaseAuthorizationDeps, tx: TransactionScope, order: Order, why: AuthorizationRelease, release: Release): Promise<Order> {
  const now = deps.clock.now();
  for (const record of await tx.payments.listForOrder(order.id)) {
    const leg = record.attempts.find((a) => a.status === 'authorized');
    if (!leg) continue;
    const canceled = cancel({ payment: record.payment, leg }, why === 'requested' ? 'order_voided' : 'authorization_expired', now);
    await tx.payments.cancel(canceled);
    release(canceled.leg);
  }
  const t = markVoided(order, deps.eventIds(), why);
  await tx.orders.saveTransition(t.order);
  await tx.outbox.append(t.event);
  return t.order;
}

/**
 * Creates the sweep that releases authorizations of manual orders not captured within
 * AUTHORIZATION_VALIDITY_MS: each such order is voided (order.voided, reason
 * authorization_expired) and its authorization voided at the acquirer. Rows another sweeper or a
 * capture holds are skipped, and taken on a later sweep if still authorized.
 */
export function createReleaseAuthorizations(deps: ReleaseAuthorizationDeps & { readonly release: Pick<AcquirerRelease, 'inTransaction'> }): ReleaseAuthorizations {
  return (limit) =>
    deps.release.inTransaction(async (tx, release) => {
      const due = await tx.orders.lockAuthorizationsDue(deps.clock.now(), limit);
      for (const order of due) await releaseAuthorization(deps, tx, order, 'authorization_expired', release);
      return due.length;
    });
}
