import type { Scope } from '../../merchant/domain/caller.ts';
import { deactivate, type PaymentLink } from '../domain/payment-link.entity.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';

/** Deactivates a link of the caller's in the caller's transaction; answers the link as it now stands. */
export type DeactivatePaymentLink = (tx: TransactionScope, scope: Scope, id: string) => Promise<PaymentLink>;

/**
 * Creates the deactivation use case: under the link's row lock (so no payment of its orders starts
 * meanwhile), the link is deactivated with payment_link.deactivated; a deactivated one is answered
 * unchanged.
 * @throws ApplicationError payment_link.not_found
 */
export function createDeactivatePaymentLink(deps: { readonly eventIds: () => { eventId: string; now: Date } }): DeactivatePaymentLink {
  return async (tx, scope, id) => {
    const owned = await tx.links.findById(scope, id);
    const link = owned && (await tx.links.lock(owned.id));
    if (!link) throw new ApplicationError('payment_link.not_found', `No such payment link: "${id}".`, 'id');
    const t = deactivate(link, deps.eventIds());
    if (!t.event) return link;
    await tx.links.markDeactivated(t.link);
    await tx.outbox.append(t.event);
    return t.link;
  };
}
