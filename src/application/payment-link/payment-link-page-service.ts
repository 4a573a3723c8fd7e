import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { OpenPaymentLinkResponseSchema, type PaymentLinkPageService } from '../../gen/checkout/v1/payment_link_pb.ts';
import { orderToProto } from '../order/order-mapper.ts';
import type { OpenPaymentLink } from './open-payment-link.ts';
import { STATUS_TO_PROTO } from './payment-link-mapper.ts';

/** Implements checkout.v1.PaymentLinkPageService: what the hosted page asks when a customer opens a link. */
export function createPaymentLinkPageService(deps: { readonly open: OpenPaymentLink }): ServiceImpl<typeof PaymentLinkPageService> {
  return {
    openPaymentLink: async (req) => {
      const opened = await deps.open(req.suffix, req.orderId);
      const page = { merchantName: opened.merchant.name, testMode: !opened.link.livemode, returnUrl: opened.link.returnUrl ?? undefined };
      if (opened.kind === 'closed') return create(OpenPaymentLinkResponseSchema, { ...page, closed: STATUS_TO_PROTO[opened.status] });
      return create(OpenPaymentLinkResponseSchema, { ...page, order: orderToProto(opened.order) });
    },
  };
}
