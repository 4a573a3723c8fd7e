import type { Scope } from '../../merchant/domain/caller.ts';
import { mergeEvidence, NO_MERCHANT_EVIDENCE, type Evidence, type EvidenceUpdate } from '../domain/evidence.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { evidenceOf } from './order-evidence.ts';

/**
 * Merges `update` into the order's evidence in `tx`, under the order's row lock so that two merges
 * of one order apply one after the other. Answers the evidence as it now stands.
 * @throws ApplicationError order.not_found; DomainError evidence.field_invalid
 */
export async function attachEvidence(tx: TransactionScope, scope: Scope, orderId: string, update: EvidenceUpdate, now: Date): Promise<Evidence> {
  const found = await tx.orders.findById(scope, orderId);
  if (!found) throw new ApplicationError('order.not_found', `No such order: "${orderId}".`, 'id');
  const order = (await tx.orders.lock(found.id))!;
  await mergeInto(tx, order, update, now);
  return evidenceOf(tx, order);
}

/** Merges and stores the order's evidence (the order already locked); nothing is written for an empty update. */
export async function mergeInto(tx: TransactionScope, order: Order, update: EvidenceUpdate, now: Date): Promise<void> {
  const stored = await tx.evidence.lock(order.id);
  const merged = mergeEvidence(stored?.evidence ?? NO_MERCHANT_EVIDENCE, update);
  if (stored && JSON.stringify(merged) === JSON.stringify(stored.evidence)) return;
  if (!stored && JSON.stringify(merged) === JSON.stringify(NO_MERCHANT_EVIDENCE)) return;
  await tx.evidence.save(order, merged, now);
}
