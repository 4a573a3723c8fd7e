import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { CreatePaymentLinkRequestSchema, PaymentLinkType, type CreatePaymentLinkRequest, type PaymentLinkService } from '../../../src/gen/checkout/v1/payment_link_pb.ts';
import { emptyBodyIsEmptyObject } from '../shared/body.ts';
import { coreCall } from '../shared/core-call.ts';
import { page } from '../shared/list-query.ts';
import type { IdParams } from '../shared/schemas.ts';
import { paymentLinkJson } from './payment-link-json.ts';
import { createPaymentLinkSchema, deactivatePaymentLinkSchema, listPaymentLinksSchema, retrievePaymentLinkSchema, type CreatePaymentLinkBody, type PaymentLinkListQuery } from './schemas.ts';

/** The proto request of a body Fastify has validated against {@link CreatePaymentLinkBody}. */
function createPaymentLinkRequest(body: CreatePaymentLinkBody): CreatePaymentLinkRequest {
  return create(CreatePaymentLinkRequestSchema, {
    amount: BigInt(body.amount),
    currency: body.currency,
    reference: body.reference,
    type: body.type === 'single_use' ? PaymentLinkType.SINGLE_USE : body.type === 'collecting' ? PaymentLinkType.COLLECTING : PaymentLinkType.UNSPECIFIED,
    lineItems: (body.line_items ?? []).map((item) => ({ name: item.name, amount: BigInt(item.amount) })),
    returnUrl: body.return_url ?? undefined,
    expiresAt: body.expires_at ? timestampFromDate(new Date(body.expires_at)) : undefined,
  });
}

/** Registers /v1/links: create, retrieve, list and deactivate, each a call to checkout.v1.PaymentLinkService. A link's orders are GET /v1/orders?payment_link=…. */
export function registerPaymentLinkRoutes(app: FastifyInstance, links: Client<typeof PaymentLinkService>): void {
  app.post<{ Body: CreatePaymentLinkBody }>('/v1/links', { schema: createPaymentLinkSchema }, async (req, reply) => {
    const res = await links.createPaymentLink(createPaymentLinkRequest(req.body), coreCall(req));
    return reply.code(201).send(paymentLinkJson(res.paymentLink!));
  });

  app.get<{ Params: IdParams }>('/v1/links/:id', { schema: retrievePaymentLinkSchema }, async (req) => {
    const res = await links.getPaymentLink({ id: req.params.id }, coreCall(req));
    return paymentLinkJson(res.paymentLink!);
  });

  app.get<{ Querystring: PaymentLinkListQuery }>('/v1/links', { schema: listPaymentLinksSchema }, async (req) => {
    const res = await links.listPaymentLinks(page(req.query), coreCall(req));
    return { object: 'list', url: '/v1/links', has_more: res.hasMore, data: res.paymentLinks.map(paymentLinkJson) };
  });

  app.post<{ Params: IdParams }>('/v1/links/:id/deactivate', { schema: deactivatePaymentLinkSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await links.deactivatePaymentLink({ id: req.params.id }, coreCall(req));
    return paymentLinkJson(res.paymentLink!);
  });
}
