import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import {
  CreatePaymentLinkRequestSchema,
  CreatePaymentLinkResponseSchema,
  DeactivatePaymentLinkRequestSchema,
  DeactivatePaymentLinkResponseSchema,
  GetPaymentLinkResponseSchema,
  ListPaymentLinksResponseSchema,
  type PaymentLinkService,
} from '../../../gen/checkout/v1/payment_link_pb.ts';
import type { PaymentLinkRepository } from '../ports/payment-link-repository.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../order/application/list-orders.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { CreatePaymentLinkUseCase } from './create-payment-link.ts';
import type { DeactivatePaymentLink } from './deactivate-payment-link.ts';
import { createPaymentLinkCommandFromProto, paymentLinkToProto } from './payment-link-mapper.ts';

/** Implements checkout.v1.PaymentLinkService: create, read, list and deactivate a merchant's links. */
export function createPaymentLinkService(deps: {
  readonly authenticate: Authenticate;
  readonly idempotent: Idempotent;
  readonly links: PaymentLinkRepository;
  readonly createLink: CreatePaymentLinkUseCase;
  readonly deactivateLink: DeactivatePaymentLink;
  readonly clock: Clock;
}): ServiceImpl<typeof PaymentLinkService> {
  return {
    createPaymentLink: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const command = createPaymentLinkCommandFromProto(req);
      const call = { operation: 'payment_links.create', input: CreatePaymentLinkRequestSchema, request: req, output: CreatePaymentLinkResponseSchema };
      return deps.idempotent(ctx, caller, call, async (tx) => {
        const link = await deps.createLink(tx, caller, command);
        return create(CreatePaymentLinkResponseSchema, { paymentLink: paymentLinkToProto(link, deps.clock.now()) });
      });
    },
    getPaymentLink: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const link = await deps.links.findById(caller, req.id);
      if (!link) throw new ApplicationError('payment_link.not_found', `No such payment link: "${req.id}".`, 'id');
      return create(GetPaymentLinkResponseSchema, { paymentLink: paymentLinkToProto(link, deps.clock.now()) });
    },
    listPaymentLinks: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const limit = req.limit === 0 ? DEFAULT_LIST_LIMIT : req.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
        throw new ApplicationError('list.limit_invalid', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`, 'limit');
      }
      const page = await deps.links.list(caller, { limit, startingAfter: req.startingAfter });
      const now = deps.clock.now();
      return create(ListPaymentLinksResponseSchema, { paymentLinks: page.links.map((link) => paymentLinkToProto(link, now)), hasMore: page.hasMore });
    },
    deactivatePaymentLink: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const call = { operation: 'payment_links.deactivate', input: DeactivatePaymentLinkRequestSchema, request: req, output: DeactivatePaymentLinkResponseSchema };
      return deps.idempotent(ctx, caller, call, async (tx) => {
        const link = await deps.deactivateLink(tx, caller, req.id);
        return create(DeactivatePaymentLinkResponseSchema, { paymentLink: paymentLinkToProto(link, deps.clock.now()) });
      });
    },
  };
}
