import type { Scope } from '../../merchant/domain/caller.ts';
import { submitDispute, type Dispute } from '../domain/dispute.entity.ts';
import type { EvidenceUpdate } from '../domain/evidence.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { mergeInto } from './attach-evidence.ts';
import { evidenceOf } from './order-evidence.ts';

/**
 * Submits a dispute's evidence in `tx`: any evidence given is merged into the order's first, then
 * the dispute moves to under_review with the evidence as it then stands, and dispute.updated goes
 * to the outbox. The order, then the dispute, are locked (the order every dispute change takes).
 * @throws ApplicationError dispute.not_found; DomainError dispute.not_submittable,
 *   dispute.evidence_past_due or evidence.field_invalid
 */
export async function submitDisputeIn(tx: TransactionScope, scope: Scope, disputeId: string, update: EvidenceUpdate, ids: { now: Date; eventIds: () => { eventId: string; now: Date } }): Promise<Dispute> {
  const found = await tx.disputes.findById(scope, disputeId);
  if (!found) throw new ApplicationError('dispute.not_found', `No such dispute: "${disputeId}".`, 'id');
  const order = await tx.orders.lock(found.orderId);
  const dispute = await tx.disputes.lock(found.id);
  if (!order || !dispute) throw new Error(`dispute ${disputeId} or its order vanished`);
  // Refused before anything is merged: a closed dispute changes nothing.
  if (dispute.status !== 'needs_response') submitDispute(dispute, await evidenceOf(tx, order), ids.now, ids.eventIds);
  await mergeInto(tx, order, update, ids.now);
  const change = submitDispute(dispute, await evidenceOf(tx, order), ids.now, ids.eventIds);
  await tx.disputes.recordSubmission(change.dispute, ids.now);
  for (const event of change.events) await tx.outbox.append(event);
  return change.dispute;
}
