import type { DeclineCode } from '../../payment/domain/decline-code.ts';
import type { PaymentOutcome } from '../../payment/application/payment-outcome.ts';
import type { CheckoutCards } from './checkout-cards.ts';
import { checkoutView, type CheckoutView } from './checkout-view.ts';

/** Where a payment on the page left the order, as the page shows it. */
export interface PaymentResult {
  readonly status: PaymentOutcome['status'];
  readonly view: CheckoutView;
  readonly challenge: PaymentOutcome['challenge'];
  readonly declineCode: DeclineCode | undefined;
}

/** The page's result of a payment's outcome: the checkout as it now stands, with the customer's cards. */
export async function paymentResult(outcome: PaymentOutcome, cards: Pick<CheckoutCards, 'withCards'>): Promise<PaymentResult> {
  const { order, attempts, merchant } = outcome.settled;
  return { status: outcome.status, view: await cards.withCards(checkoutView(order, attempts, merchant)), challenge: outcome.challenge, declineCode: outcome.declineCode };
}
