import type { Order } from '../../order/domain/order.entity.ts';
import { DECLINES } from '../../payment/domain/decline-code.ts';
import type { PaymentAttempt, PaymentMethod } from '../../payment/domain/payment-attempt.entity.ts';
import { MAX_ATTEMPTS_PER_ORDER, submissionsOf } from '../../payment/domain/attempt-policy.ts';
import { VIRTUAL_ACCOUNT_BANK, virtualIbanFor } from '../../payment/domain/iban.ts';
import { orderSuffix } from '../../order/domain/order.entity.ts';
import type { SavedCard } from '../../customer/domain/saved-card.ts';
import type { MerchantRecord } from '../../merchant/ports/merchant-repository.port.ts';

/** What the customer's checkout shows, in the core's terms. */
export interface CheckoutView {
  readonly checkoutId: string;
  readonly merchantName: string;
  readonly order: Order;
  readonly attempts: readonly PaymentAttempt[];
  readonly methods: readonly PaymentMethod[];
  readonly bankTransfer: { iban: string; bic: string; accountHolder: string; reference: string; amount: bigint; currency: string } | undefined;
  readonly receipt: { method: string; cardBrand: string; cardLast4: string; paidAt: Date } | undefined;
  readonly lastFailureMessage: string;
  readonly lastFailureCode: string;
  readonly attemptsRemaining: number;
  /** return_url with order_id and reference added, or "" when the merchant gave none. */
  readonly returnUrl: string;
  readonly checkoutToken: string;
  readonly testMode: boolean;
  /** When the order names a customer: its saved cards, for one-click payment. */
  readonly savedCards?: readonly SavedCard[];
  /** When the order names a customer (and is open): the page offers "save this card". */
  readonly canSaveCard?: boolean;
}

/** Builds the checkout view of an order from its attempts and merchant. */
export function checkoutView(order: Order, attempts: readonly PaymentAttempt[], merchant: MerchantRecord): CheckoutView {
  // An authorized attempt (manual capture) is the customer's payment as much as a captured one.
  const succeeded = attempts.find((a) => a.status === 'succeeded') ?? attempts.find((a) => a.status === 'authorized');
  const last = attempts.at(-1);
  const submissions = submissionsOf(attempts);
  let returnUrl = '';
  if (order.returnUrl) {
    const url = new URL(order.returnUrl);
    url.searchParams.set('order_id', order.id);
    url.searchParams.set('reference', order.reference);
    returnUrl = url.toString();
  }
  return {
    checkoutId: orderSuffix(order.id),
    merchantName: merchant.name,
    order,
    attempts,
    methods: merchant.paymentMethods,
    bankTransfer: merchant.paymentMethods.includes('bank_transfer')
      ? {
          iban: virtualIbanFor(order.id),
          bic: VIRTUAL_ACCOUNT_BANK.bic,
          accountHolder: `${VIRTUAL_ACCOUNT_BANK.holder} re ${merchant.name}`,
          reference: order.reference,
          amount: order.amount,
          currency: order.currency,
        }
      : undefined,
    receipt: succeeded
      ? { method: succeeded.method, cardBrand: succeeded.cardBrand ?? '', cardLast4: succeeded.cardLast4 ?? '', paidAt: succeeded.updatedAt }
      : undefined,
    lastFailureMessage: order.status === 'failed' && last?.declineCode ? DECLINES[last.declineCode].customerMessage : '',
    lastFailureCode: order.status === 'failed' && last?.declineCode ? last.declineCode : '',
    attemptsRemaining: Math.max(0, MAX_ATTEMPTS_PER_ORDER - submissions),
    returnUrl,
    checkoutToken: order.checkoutToken,
    testMode: !order.livemode,
  };
}
