import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  CheckoutService} from '../../../gen/checkout/v1/checkout_pb.ts';
import {
  CompleteAuthenticationResponseSchema,
  CompleteRedirectResponseSchema,
  GetCheckoutResponseSchema,
  SubmitCardPaymentResponseSchema,
  SubmitWalletPaymentResponseSchema,
  SubmitSavedCardPaymentResponseSchema,
} from '../../../gen/checkout/v1/checkout_pb.ts';
import { parseCard } from '../../payment/domain/card.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import { checkoutToProto, outcomeToProto } from './checkout-mapper.ts';
import { orderIdOfCheckout, type Order } from '../../order/domain/order.entity.ts';
import type { OrderRepository } from '../../order/ports/order-repository.port.ts';
import type { PayOrder } from '../../payment/application/pay-order.ts';
import type { AuthenticatePayment } from '../../payment/application/authenticate-payment.ts';
import type { PaymentClient } from '../../payment/application/payment-instrument.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { CheckoutCards } from './checkout-cards.ts';
import type { GetCheckout } from './get-checkout.ts';
import { paymentResult } from './payment-result.ts';
import { CLIENT_ADDRESS, HOSTED_PAGE } from '../../../kernel/application/request-context.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import { authorizeCheckout, CHECKOUT_TOKEN_HEADER, CLIENT_SECRET_HEADER, fieldsOriginOf, FIELDS_ORIGIN_HEADER, requireClientSecret, type CheckoutCredential } from './checkout-authorization.ts';

export { CHECKOUT_TOKEN_HEADER, CLIENT_SECRET_HEADER, FIELDS_ORIGIN_HEADER } from './checkout-authorization.ts';

/** What the checkout service calls: the payment use cases themselves, and the checkout's read. */
export interface CheckoutServiceDeps {
  readonly getCheckout: GetCheckout;
  readonly payOrder: PayOrder;
  readonly authenticatePayment: AuthenticatePayment;
  readonly cards: CheckoutCards;
  /** The order of a saved card's payment, read before its card is opened. */
  readonly orders: Pick<OrderRepository, 'findForCheckout'>;
  readonly clock: Clock;
  readonly authenticate: Authenticate;
}

/**
 * Implements checkout.v1.CheckoutService over the payment use cases, which it calls directly: the
 * caller names an order by its checkout id and proves it may act on it with a
 * {@link CheckoutCredential} (the page's checkout token, or an app's publishable key and client
 * secret), which the one rule authorizeCheckout checks, again under the order's lock; the outcome
 * comes back as the page's view. The page is one caller of pay-order among others (a server-side
 * charge, a subscription's cycle). A call with an Authorization
 * header (or a client secret) is an app's: its publishable key is verified and carried with the
 * client secret; any other is the hosted page's, by its checkout token. authorizeCheckout decides.
 *
 * The checkout token lives as long as the order and pays it, so it is answered to one caller only:
 * the hosted page rendering itself (HOSTED_PAGE, set in process by the gateway), which puts it in
 * the page for its script. An anonymous GetCheckout over the network (whoever knows the checkout
 * id, which every client secret contains), an app's GetCheckout, and every payment's answer carry
 * an empty token: nothing a client secret can reach outlives it.
 */
export function createCheckoutService(deps: CheckoutServiceDeps): ServiceImpl<typeof CheckoutService> {
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
  // The embedded fields' number frame names the merchant page's origin: a redirect's return leg then carries it.
  const client = (ctx: HandlerContext): PaymentClient => ({ address: ctx.values.get(CLIENT_ADDRESS), fieldsOrigin: fieldsOriginOf(ctx.requestHeader.get(FIELDS_ORIGIN_HEADER)) });
  /** The credential's check of an order, run by the use case under the order's lock. */
  const authorized = (credential: CheckoutCredential) => (order: Order) => authorizeCheckout(order, credential, deps.clock.now());

  return {
    getCheckout: async (req, ctx) => {
      // The page's read needs no token (it is how the page learns it); an app's is authorized.
      const given = await credential(ctx);
      const app = given?.kind === 'client_secret';
      const view = await deps.getCheckout(req.checkoutId, app ? given : undefined);
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
      // The card to save is held for this submission's payment, and saved with its success only.
      const outcome = await deps.payOrder({
        orderId: orderIdOfCheckout(req.checkoutId),
        authorize: authorized(await required(ctx)),
        submissionId: req.submissionId,
        instrument: { method: 'card', card },
        client: client(ctx),
        saveCard: req.saveCard,
      });
      return create(SubmitCardPaymentResponseSchema, { outcome: outcomeToProto(await paymentResult(outcome, deps.cards)) });
    },
    submitSavedCardPayment: async (req, ctx) => {
      const credential = await required(ctx);
      // The order is read and its credential checked before its customer's card is opened (and again under the lock).
      const order = await deps.orders.findForCheckout(orderIdOfCheckout(req.checkoutId));
      if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
      authorized(credential)(order);
      const instrument = await deps.cards.savedInstrument(order, req.cardId);
      const outcome = await deps.payOrder({ orderId: order.id, authorize: authorized(credential), submissionId: req.submissionId, instrument, client: client(ctx) });
      return create(SubmitSavedCardPaymentResponseSchema, { outcome: outcomeToProto(await paymentResult(outcome, deps.cards)) });
    },
    completeAuthentication: async (req, ctx) => {
      // A card its payment was asked to save is saved (or dropped) with that payment's own end.
      const outcome = await deps.authenticatePayment({
        orderId: orderIdOfCheckout(req.checkoutId),
        authorize: authorized(await required(ctx)),
        attemptId: req.attemptId,
        answer: req.abandon ? { abandon: true } : { code: req.code },
      });
      return create(CompleteAuthenticationResponseSchema, { outcome: outcomeToProto(await paymentResult(outcome, deps.cards)) });
    },
    completeRedirect: async (req) => {
      // The return leg carries no credential (the browser comes back from the issuer without the page's
      // token): the processor verifies what it sent back, and only the attempt waiting for it is completed.
      const outcome = await deps.authenticatePayment({
        orderId: orderIdOfCheckout(req.checkoutId),
        authorize: () => undefined,
        attemptId: req.attemptId,
        answer: { returnParams: { ...req.params } },
      });
      return create(CompleteRedirectResponseSchema, { outcome: outcomeToProto(await paymentResult(outcome, deps.cards)) });
    },
    submitWalletPayment: async (req, ctx) => {
      const outcome = await deps.payOrder({ orderId: orderIdOfCheckout(req.checkoutId), authorize: authorized(await required(ctx)), submissionId: req.submissionId, instrument: { method: 'wallet' }, client: client(ctx) });
      return create(SubmitWalletPaymentResponseSchema, { outcome: outcomeToProto(await paymentResult(outcome, deps.cards)) });
    },
  };
}
