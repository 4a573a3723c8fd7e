import { create } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { MerchantEvidenceSchema, type DisputeService } from '../../../src/gen/checkout/v1/dispute_pb.ts';
import { emptyBodyIsEmptyObject } from '../shared/body.ts';
import { coreCall } from '../shared/core-call.ts';
import { page } from '../shared/list-query.ts';
import type { IdParams } from '../shared/schemas.ts';
import { disputeJson, evidenceFromBody, evidenceJson } from './dispute-json.ts';
import { attachEvidenceSchema, listDisputesSchema, retrieveDisputeSchema, submitDisputeSchema, type DisputeListQuery, type EvidenceBody, type SubmitBody } from './schemas.ts';

/** Registers /v1/disputes and POST /v1/orders/:id/evidence, each a call to checkout.v1.DisputeService. */
export function registerDisputeRoutes(app: FastifyInstance, disputes: Client<typeof DisputeService>): void {
  app.get<{ Querystring: DisputeListQuery }>('/v1/disputes', { schema: listDisputesSchema }, async (req) => {
    const res = await disputes.listDisputes({ ...page(req.query), orderId: req.query.order }, coreCall(req));
    return { object: 'list', url: '/v1/disputes', has_more: res.hasMore, data: res.disputes.map(disputeJson) };
  });

  app.get<{ Params: IdParams }>('/v1/disputes/:id', { schema: retrieveDisputeSchema }, async (req) => {
    const res = await disputes.getDispute({ id: req.params.id }, coreCall(req));
    return disputeJson(res.dispute!);
  });

  app.post<{ Params: IdParams; Body: SubmitBody }>('/v1/disputes/:id/submit', { schema: submitDisputeSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await disputes.submitDispute({ id: req.params.id, evidence: create(MerchantEvidenceSchema, evidenceFromBody(req.body.evidence)) }, coreCall(req));
    return disputeJson(res.dispute!);
  });

  app.post<{ Params: IdParams; Body: EvidenceBody }>('/v1/orders/:id/evidence', { schema: attachEvidenceSchema }, async (req) => {
    const res = await disputes.attachEvidence({ orderId: req.params.id, evidence: create(MerchantEvidenceSchema, evidenceFromBody(req.body)) }, coreCall(req));
    return evidenceJson(res.evidence!);
  });
}
