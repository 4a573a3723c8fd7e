import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import {
  AttachEvidenceRequestSchema,
  AttachEvidenceResponseSchema,
  GetDisputeResponseSchema,
  ListDisputesResponseSchema,
  SubmitDisputeRequestSchema,
  SubmitDisputeResponseSchema,
  type DisputeService,
} from '../../../gen/checkout/v1/dispute_pb.ts';
import type { Dispute } from '../domain/dispute.entity.ts';
import type { Evidence } from '../domain/evidence.ts';
import type { DisputeRepository } from '../ports/dispute-repository.port.ts';
import type { EvidenceRepository } from '../ports/evidence-repository.port.ts';
import type { OrderRepository } from '../../order/ports/order-repository.port.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../order/application/list-orders.ts';
import { attachEvidence } from './attach-evidence.ts';
import { disputeToProto, evidenceToProto, evidenceUpdateFromProto } from './dispute-mapper.ts';
import { evidenceOf } from './order-evidence.ts';
import { submitDisputeIn } from './submit-dispute.ts';

/** What the dispute service reads outside of transactions. */
export interface DisputeReads {
  readonly disputes: DisputeRepository;
  readonly evidence: EvidenceRepository;
  readonly orders: OrderRepository;
  readonly payments: PaymentRepository;
}

/** The evidence a dispute shows while not submitted: its order's as it stands now. */
export async function currentEvidence(reads: DisputeReads, dispute: Dispute): Promise<Evidence | undefined> {
  if (dispute.submittedEvidence) return undefined;
  const order = await reads.orders.findForCheckout(dispute.orderId);
  return order ? evidenceOf(reads, order) : undefined;
}

/** Implements checkout.v1.DisputeService: read disputes, submit them, attach evidence to orders. */
export function createDisputeService(deps: {
  readonly authenticate: Authenticate;
  readonly idempotent: Idempotent;
  readonly reads: DisputeReads;
  readonly clock: Clock;
  readonly eventIds: () => { eventId: string; now: Date };
}): ServiceImpl<typeof DisputeService> {
  const toProto = async (dispute: Dispute) => disputeToProto(dispute, await currentEvidence(deps.reads, dispute));
  return {
    getDispute: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const dispute = await deps.reads.disputes.findById(caller, req.id);
      if (!dispute) throw new ApplicationError('dispute.not_found', `No such dispute: "${req.id}".`, 'id');
      return create(GetDisputeResponseSchema, { dispute: await toProto(dispute) });
    },
    listDisputes: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const limit = req.limit === 0 ? DEFAULT_LIST_LIMIT : req.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
        throw new ApplicationError('list.limit_invalid', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`, 'limit');
      }
      const page = await deps.reads.disputes.list(caller, { limit, startingAfter: req.startingAfter, orderId: req.orderId });
      return create(ListDisputesResponseSchema, { disputes: await Promise.all(page.disputes.map(toProto)), hasMore: page.hasMore });
    },
    submitDispute: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const call = { operation: 'disputes.submit', input: SubmitDisputeRequestSchema, request: req, output: SubmitDisputeResponseSchema };
      return deps.idempotent(ctx, caller, call, async (tx) => {
        const dispute = await submitDisputeIn(tx, caller, req.id, evidenceUpdateFromProto(req.evidence), { now: deps.clock.now(), eventIds: deps.eventIds });
        return create(SubmitDisputeResponseSchema, { dispute: disputeToProto(dispute, undefined) });
      });
    },
    attachEvidence: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const call = { operation: 'disputes.attach_evidence', input: AttachEvidenceRequestSchema, request: req, output: AttachEvidenceResponseSchema };
      return deps.idempotent(ctx, caller, call, async (tx) => {
        const evidence = await attachEvidence(tx, caller, req.orderId, evidenceUpdateFromProto(req.evidence), deps.clock.now());
        return create(AttachEvidenceResponseSchema, { evidence: evidenceToProto(evidence) });
      });
    },
  };
}
