import { isDueToExpire } from '../../order/domain/order-transitions.ts';
import { orderIdOfCheckout, type Order } from '../../order/domain/order.entity.ts';
import type { DeclineCode } from '../../payment/domain/decline-code.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { PaymentInstrument, PaymentClient } from '../../payment/application/pay-order.ts';
import type { PaymentOutcome } from '../../payment/application/payment-outcome.ts';
import { attemptsOf } from '../../payment/application/payment-kit.ts';
import type { Payments } from '../../payment/application/payments.ts';
import { checkoutView, type CheckoutView } from './checkout-view.ts';
import { authorizeCheckout, type CheckoutCredential } from './checkout-authorization.ts';
import { takesPayment } from '../../order/domain/order-transitions.ts';
import type { CardVault } from '../../customer/ports/card-vault.port.ts';
import { cardNotFound, type CardVaultUseCases } from '../../customer/application/card-vault-use-cases.ts';

/** Where a payment on the page left the order, as the page shows it. */
export interface PaymentResult {
  readonly status: PaymentOutcome['status'];
  readonly view: CheckoutView;
  readonly challenge: PaymentOutcome['challenge'];
  readonly declineCode: DeclineCode | undefined;
}

/** What the hosted checkout page does with an order: show it, pay it, answer its challenge. */
export interface CheckoutPayments {
  /**
   * Loads the checkout (expiring it first if its time has come). With a credential (an app's key and
   * client secret), only when it authorizes the order; without, as the hosted page does by its id.
   */
  view(checkoutId: string, credential?: CheckoutCredential): Promise<CheckoutView>;
  /**
   * Pays with a card or the wallet; idempotent per submission id. `saveCard`: vault the typed card
   * for the order's customer if this submission's payment succeeds (and only then).
   */
  pay(checkoutId: string, credential: CheckoutCredential, submissionId: string, instrument: PaymentInstrument, client: PaymentClient, saveCard?: boolean): Promise<PaymentResult>;
  /** Pays with one of the order's customer's saved cards (one click); idempotent per submission id. */
  paySaved(checkoutId: string, credential: CheckoutCredential, submissionId: string, cardId: string, client: PaymentClient): Promise<PaymentResult>;
  /** Completes or abandons a pending 3-D Secure challenge. */
  authenticate(checkoutId: string, credential: CheckoutCredential, attemptId: string, answer: { code: string } | { abandon: true }): Promise<PaymentResult>;
}

/**
 * The checkout's side of the payment use cases: the caller names an order by
 * its checkout id and proves it may act on it with a {@link CheckoutCredential}
 * (the page's checkout token, or an app's publishable key and client secret),
 * which the one rule authorizeCheckout checks, again under the order's lock; the outcome comes back as the page's view.
 * The page is one caller of pay-order among others (a server-side charge, a
 * subscription's cycle).
 */
export function createCheckoutPayments(payments: Payments, vault?: { readonly cards: CardVault; readonly useCases: CardVaultUseCases }): CheckoutPayments {
  const { kit } = payments;
  const { deps } = kit;
  const withCards = async (view: CheckoutView): Promise<CheckoutView> => {
    const { order } = view;
    if (!vault || !order.customerId) return view;
    const scope = { merchantId: order.merchantId, livemode: order.livemode };
    return { ...view, savedCards: takesPayment(order) ? await vault.cards.listCards(scope, order.customerId) : [], canSaveCard: takesPayment(order) };
  };
  /** The order of a call, its credential checked (again under the lock when it pays). */
  const orderOfPage = async (checkoutId: string, credential: CheckoutCredential): Promise<Order> => {
    const order = await deps.reads.orders.findForCheckout(orderIdOfCheckout(checkoutId));
    if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
    authorized(credential)(order);
    return order;
  };
  const authorized = (credential: CheckoutCredential) => (order: Order) => authorizeCheckout(order, credential, deps.clock.now());
  const asResult = async (outcome: PaymentOutcome): Promise<PaymentResult> => ({
    status: outcome.status,
    view: await withCards(checkoutView(outcome.settled.order, outcome.settled.attempts, outcome.settled.merchant)),
    challenge: outcome.challenge,
    declineCode: outcome.declineCode,
  });

  return {
    async view(checkoutId, credential) {
      const orderId = orderIdOfCheckout(checkoutId);
      let order = await deps.reads.orders.findForCheckout(orderId);
      if (order && isDueToExpire(order, deps.clock.now())) {
        order = await kit.inTransaction(async (tx, release) => {
          const locked = await tx.orders.lock(orderId);
          return locked ? kit.expireIfDue(tx, locked, release) : undefined;
        });
      }
      if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
      if (credential) authorized(credential)(order);
      return withCards(checkoutView(order, await attemptsOf(deps.reads.payments, orderId), await kit.merchantOf(order.merchantId)));
    },
    async pay(checkoutId, credential, submissionId, instrument, client, saveCard = false) {
      // The card to save is held for this submission's payment, and saved by the engine with its success only.
      return asResult(await payments.payOrder({ orderId: orderIdOfCheckout(checkoutId), authorize: authorized(credential), submissionId, instrument, client, saveCard }));
    },
    async paySaved(checkoutId, credential, submissionId, cardId, client) {
      const order = await orderOfPage(checkoutId, credential);
      const scope = { merchantId: order.merchantId, livemode: order.livemode };
      const opened = vault && order.customerId ? await vault.useCases.openCard(scope, order.customerId, cardId) : undefined;
      if (!opened) throw cardNotFound(cardId, 'card_id');
      const instrument: PaymentInstrument = { method: 'card', card: opened.card, saved: { cardId: opened.saved.id, offSession: false } };
      return asResult(await payments.payOrder({ orderId: order.id, authorize: authorized(credential), submissionId, instrument, client }));
    },
    async authenticate(checkoutId, credential, attemptId, answer) {
      // A card its payment was asked to save is saved (or dropped) by the engine, with that payment's own end.
      return asResult(await payments.authenticate({ orderId: orderIdOfCheckout(checkoutId), authorize: authorized(credential), attemptId, answer }));
    },
  };
}
