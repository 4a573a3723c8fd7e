import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  CheckoutService} from '../../../gen/checkout/v1/checkout_pb.ts';
import {
  CompleteAuthenticationResponseSchema,
  GetCheckoutResponseSchema,
  SubmitCardPaymentResponseSchema,
  SubmitWalletPaymentResponseSchema,
  SubmitSavedCardPaymentResponseSchema,
} from '../../../gen/checkout/v1/checkout_pb.ts';
import { parseCard } from '../../payment/domain/card.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import { checkoutToProto, outcomeToProto } from './checkout-mapper.ts';
import type { PaymentClient } from '../../payment/application/pay-order.ts';
import type { CheckoutPayments } from './checkout-payments.ts';
import { CLIENT_ADDRESS, HOSTED_PAGE } from '../../../kernel/application/request-context.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import { CHECKOUT_TOKEN_HEADER, CLIENT_SECRET_HEADER, requireClientSecret, type CheckoutCredential } from './checkout-authorization.ts';

export { CHECKOUT_TOKEN_HEADER, CLIENT_SECRET_HEADER } from './checkout-authorization.ts';

/**
 * Implements checkout.v1.CheckoutService over the payment engine. A call with an Authorization
 * header (or a client secret) is an app's: its publishable key is verified and carried with the
 * client secret; any other is the hosted page's, by its checkout token. authorizeCheckout decides.
 *
 * The checkout token lives as long as the order and pays it, so it is answered to one caller only:
 * the hosted page rendering itself (HOSTED_PAGE, set in process by the gateway), which puts it in
 * the page for its script. An anonymous GetCheckout over the network (whoever knows the checkout
 * id, which every client secret contains), an app's GetCheckout, and every payment's answer carry
 * an empty token: nothing a client secret can reach outlives it.
 */
export function createCheckoutService(deps: { readonly engine: CheckoutPayments; readonly clock: Clock; readonly authenticate: Authenticate }): ServiceImpl<typeof CheckoutService> {
  const credential = async (ctx: HandlerContext): Promise<CheckoutCredential | undefined> => {
    const secret = ctx.requestHeader.get(CLIENT_SECRET_HEADER);
    if (ctx.requestHeader.get('authorization') === null && secret === null) {
      const token = ctx.requestHeader.get(CHECKOUT_TOKEN_HEADER);
      return token === null ? undefined : { kind: 'checkout_token', token };
    }
    const caller = await deps.authenticate(ctx, 'publishable');
    return { kind: 'client_secret', scope: { merchantId: caller.merchantId, livemode: caller.livemode }, secret: requireClientSecret(secret) };
  };
  /** A state-changing call's credential: without any, the page's empty token (refused). */
  const required = async (ctx: HandlerContext): Promise<CheckoutCredential> => (await credential(ctx)) ?? { kind: 'checkout_token', token: '' };
  const client = (ctx: HandlerContext): PaymentClient => ({ address: ctx.values.get(CLIENT_ADDRESS) });

  return {
    getCheckout: async (req, ctx) => {
      // The page's read needs no token (it is how the page learns it); an app's is authorized.
      const given = await credential(ctx);
      const app = given?.kind === 'client_secret';
      const view = await deps.engine.view(req.checkoutId, app ? given : undefined);
      // Only the hosted page's own render learns the token; an app pays with its client secret, which
      // expires, and an anonymous caller may hold no more than a secret's checkout id.
      const checkout = checkoutToProto(view, { withToken: !app && ctx.values.get(HOSTED_PAGE) === true });
      return create(GetCheckoutResponseSchema, { checkout });
    },
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
      const result = await deps.engine.pay(req.checkoutId, await required(ctx), req.submissionId, { method: 'card', card }, client(ctx), req.saveCard);
      return create(SubmitCardPaymentResponseSchema, { outcome: outcomeToProto(result) });
    },
    submitSavedCardPayment: async (req, ctx) => {
      const result = await deps.engine.paySaved(req.checkoutId, await required(ctx), req.submissionId, req.cardId, client(ctx));
      return create(SubmitSavedCardPaymentResponseSchema, { outcome: outcomeToProto(result) });
    },
    completeAuthentication: async (req, ctx) => {
      const result = await deps.engine.authenticate(req.checkoutId, await required(ctx), req.attemptId, req.abandon ? { abandon: true } : { code: req.code });
      return create(CompleteAuthenticationResponseSchema, { outcome: outcomeToProto(result) });
    },
    submitWalletPayment: async (req, ctx) => {
      const result = await deps.engine.pay(req.checkoutId, await required(ctx), req.submissionId, { method: 'wallet' }, client(ctx));
      return create(SubmitWalletPaymentResponseSchema, { outcome: outcomeToProto(result) });
    },
  };
}
