import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  CheckoutService} from '../../gen/checkout/v1/checkout_pb.ts';
import {
  CompleteAuthenticationResponseSchema,
  GetCheckoutResponseSchema,
  SubmitCardPaymentResponseSchema,
  SubmitWalletPaymentResponseSchema,
  SubmitSavedCardPaymentResponseSchema,
} from '../../gen/checkout/v1/checkout_pb.ts';
import { parseCard } from '../../domain/payment/card.ts';
import type { Clock } from '../../ports/shared/clock.port.ts';
import { checkoutToProto, outcomeToProto } from './checkout-mapper.ts';
import type { PaymentClient } from '../payment/pay-order.ts';
import type { CheckoutPayments } from './checkout-payments.ts';
import { CLIENT_ADDRESS } from '../shared/request-context.ts';

/** Header carrying the checkout page's token on state-changing calls. */
export const CHECKOUT_TOKEN_HEADER = 'checkout-token';

/** Implements checkout.v1.CheckoutService over the payment engine. */
export function createCheckoutService(deps: { readonly engine: CheckoutPayments; readonly clock: Clock }): ServiceImpl<typeof CheckoutService> {
  const token = (ctx: HandlerContext) => ctx.requestHeader.get(CHECKOUT_TOKEN_HEADER) ?? '';
  const client = (ctx: HandlerContext): PaymentClient => ({ address: ctx.values.get(CLIENT_ADDRESS) });

  return {
    getCheckout: async (req) => create(GetCheckoutResponseSchema, { checkout: checkoutToProto(await deps.engine.view(req.checkoutId)) }),
    submitCardPayment: async (req, ctx) => {
      const card = parseCard(
        {
          number: req.card?.number ?? '',
          expMonth: req.card?.expMonth ?? 0,
          expYear: req.card?.expYear ?? 0,
          cvc: req.card?.cvc ?? '',
          name: req.card?.name ?? '',
        },
        deps.clock.now(),
      );
      const result = await deps.engine.pay(req.checkoutId, token(ctx), req.submissionId, { method: 'card', card }, client(ctx), req.saveCard);
      return create(SubmitCardPaymentResponseSchema, { outcome: outcomeToProto(result) });
    },
    submitSavedCardPayment: async (req, ctx) => {
      const result = await deps.engine.paySaved(req.checkoutId, token(ctx), req.submissionId, req.cardId, client(ctx));
      return create(SubmitSavedCardPaymentResponseSchema, { outcome: outcomeToProto(result) });
    },
    completeAuthentication: async (req, ctx) => {
      const result = await deps.engine.authenticate(req.checkoutId, token(ctx), req.attemptId, req.abandon ? { abandon: true } : { code: req.code });
      return create(CompleteAuthenticationResponseSchema, { outcome: outcomeToProto(result) });
    },
    submitWalletPayment: async (req, ctx) => {
      const result = await deps.engine.pay(req.checkoutId, token(ctx), req.submissionId, { method: 'wallet' }, client(ctx));
      return create(SubmitWalletPaymentResponseSchema, { outcome: outcomeToProto(result) });
    },
  };
}
