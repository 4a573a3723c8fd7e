import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { OpenPaymentLinkResponseSchema, StartPaymentResponseSchema, type PaymentLinkPageService } from '../../../gen/checkout/v1/payment_link_pb.ts';
import { orderSuffix } from '../../order/domain/order.entity.ts';
import { CLIENT_ADDRESS } from '../../../kernel/application/request-context.ts';
import type { OpenPaymentLink } from './open-payment-link.ts';
import type { StartLinkPayment } from './start-link-payment.ts';
import { linkCheckoutToProto, STATUS_TO_PROTO } from './payment-link-mapper.ts';

/**
 * Implements checkout.v1.PaymentLinkPageService: what the hosted page asks when a customer opens a
 * link (a read), and when they start to pay it (the order is created then).
 */
export function createPaymentLinkPageService(deps: { readonly open: OpenPaymentLink; readonly start: StartLinkPayment }): ServiceImpl<typeof PaymentLinkPageService> {
  return {
    openPaymentLink: async (req) => {
      const opened = await deps.open(req.suffix);
      const page = { merchantName: opened.merchant.name, testMode: !opened.link.livemode, returnUrl: opened.link.returnUrl ?? undefined };
      if (opened.kind === 'closed') return create(OpenPaymentLinkResponseSchema, { ...page, closed: STATUS_TO_PROTO[opened.status] });
      return create(OpenPaymentLinkResponseSchema, { ...page, checkout: linkCheckoutToProto(opened.link, opened.merchant) });
    },
    startPayment: async (req, ctx) => {
      const { order } = await deps.start(req.suffix, req.startId, { address: ctx.values.get(CLIENT_ADDRESS) });
      return create(StartPaymentResponseSchema, { checkoutId: orderSuffix(order.id), checkoutToken: order.checkoutToken, checkoutUrl: order.checkoutUrl });
    },
  };
}
