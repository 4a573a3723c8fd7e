import { timingSafeEqual } from 'node:crypto';
import { isDueToExpire } from '../../domain/order/order-transitions.ts';
import { orderIdOfCheckout, type Order } from '../../domain/order/order.entity.ts';
import type { DeclineCode } from '../../domain/payment/decline-code.ts';
import { ApplicationError } from '../shared/application-error.ts';
import type { PaymentInstrument, PaymentClient } from '../payment/pay-order.ts';
import type { PaymentOutcome } from '../payment/payment-outcome.ts';
import { attemptsOf } from '../payment/payment-kit.ts';
import type { Payments } from '../payment/payments.ts';
import { checkoutView, type CheckoutView } from './checkout-view.ts';

/** Where a payment on the page left the order, as the page shows it. */
export interface PaymentResult {
  readonly status: PaymentOutcome['status'];
  readonly view: CheckoutView;
  readonly challenge: PaymentOutcome['challenge'];
  readonly declineCode: DeclineCode | undefined;
}

/** What the hosted checkout page does with an order: show it, pay it, answer its challenge. */
export interface CheckoutPayments {
  /** Loads the checkout (expiring it first if its time has come). */
  view(checkoutId: string): Promise<CheckoutView>;
  /** Pays with a card or the wallet; idempotent per submission id. */
  pay(checkoutId: string, token: string, submissionId: string, instrument: PaymentInstrument, client: PaymentClient): Promise<PaymentResult>;
  /** Completes or abandons a pending 3-D Secure challenge. */
  authenticate(checkoutId: string, token: string, attemptId: string, answer: { code: string } | { abandon: true }): Promise<PaymentResult>;
}

function tokenMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The checkout page's side of the payment use cases: it names an order by
 * its checkout id and proves it is the page with the checkout token, which is
 * checked under the order's lock; the outcome comes back as the page's view.
 * The page is one caller of pay-order among others (a server-side charge, a
 * subscription's cycle).
 */
export function createCheckoutPayments(payments: Payments): CheckoutPayments {
  const { kit } = payments;
  const { deps } = kit;
  const withToken = (token: string) => (order: Order) => {
    if (!tokenMatches(order.checkoutToken, token)) {
      throw new ApplicationError('checkout.token_invalid', 'The checkout token is missing or wrong; reload the checkout page.');
    }
  };
  const asResult = (outcome: PaymentOutcome): PaymentResult => ({
    status: outcome.status,
    view: checkoutView(outcome.settled.order, outcome.settled.attempts, outcome.settled.merchant),
    challenge: outcome.challenge,
    declineCode: outcome.declineCode,
  });

  return {
    async view(checkoutId) {
      const orderId = orderIdOfCheckout(checkoutId);
      let order = await deps.reads.orders.findForCheckout(orderId);
      if (order && isDueToExpire(order, deps.clock.now())) {
        order = await kit.inTransaction(async (tx, release) => {
          const locked = await tx.orders.lock(orderId);
          return locked ? kit.expireIfDue(tx, locked, release) : undefined;
        });
      }
      if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
      return checkoutView(order, await attemptsOf(deps.reads.payments, orderId), await kit.merchantOf(order.merchantId));
    },
    async pay(checkoutId, token, submissionId, instrument, client) {
      return asResult(await payments.payOrder({ orderId: orderIdOfCheckout(checkoutId), authorize: withToken(token), submissionId, instrument, client }));
    },
    async authenticate(checkoutId, token, attemptId, answer) {
      return asResult(await payments.authenticate({ orderId: orderIdOfCheckout(checkoutId), authorize: withToken(token), attemptId, answer }));
    },
  };
}
