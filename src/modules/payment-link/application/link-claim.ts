import type { Order } from '../../order/domain/order.entity.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { assertLinkTakesPayment } from '../domain/link-payment-policy.ts';
import { recordCompletion } from '../domain/payment-link.entity.ts';

/**
 * Reserves the completion of the order's payment link for a payment about to start, in the
 * transaction that starts it: locks the link (so the payments of its orders start one at a time)
 * and refuses when it takes no payment. The reservation is the started payment itself: while it is
 * processing or waiting for its challenge, no other order of a single-use link can start one; it
 * is released when the attempt fails, is declined or canceled (the order's expiry cancels it).
 * Nothing for an order no link created.
 * @throws DomainError checkout.link_inactive, checkout.link_used
 */
export async function claimLink(tx: TransactionScope, order: Order, now: Date): Promise<void> {
  if (!order.paymentLinkId) return;
  const link = await tx.links.lock(order.paymentLinkId);
  if (!link) throw new Error(`payment link ${order.paymentLinkId} of order ${order.id} vanished`);
  const othersInFlight = link.type === 'single_use' && (await tx.links.hasPaymentInFlight(link.id, order.id));
  assertLinkTakesPayment(link, othersInFlight, now);
}

/**
 * Counts the paid order on its payment link, in the transaction that records the payment (order,
 * then link: the lock order of claimLink too), with payment_link.completed when a single-use link
 * has its payment. Nothing for an order no link created.
 */
export async function completeLinkPayment(tx: TransactionScope, order: Order, eventIds: EventIds): Promise<void> {
  if (!order.paymentLinkId) return;
  const link = await tx.links.lock(order.paymentLinkId);
  if (!link) throw new Error(`payment link ${order.paymentLinkId} of order ${order.id} vanished`);
  const completed = recordCompletion(link, order.id, eventIds());
  await tx.links.recordCompletion(completed.link);
  if (completed.event) await tx.outbox.append(completed.event);
}
