// Our verified webhook events in Medusa's terms: the action its payment module takes, for which payment
// session, for how much.
import type { WebhookEvent } from '@hosted-checkout/node';
import type { PaymentActions, WebhookActionResult } from '@medusajs/framework/types';
import { fromMinorUnits } from './amounts.ts';

/** Medusa's payment session ids: the references of the orders this provider creates. */
const SESSION_ID = /^payses_[0-9A-Za-z]+$/;

/**
 * The Medusa action of each order event (Medusa's webhook subscriber acts on `authorized` and `captured` only:
 * it authorizes the session, captures the payment and completes the cart; the others it records nothing for).
 * `order.failed` is not final on our side (the customer may pay until the order expires), and Medusa keeps the
 * session open on `failed`. Medusa has no action for a refund: refunds made in Medusa reach us through
 * refundPayment, and `order.refunded` is `not_supported`.
 */
const ACTIONS: Readonly<Record<string, PaymentActions>> = {
  'order.paid': 'captured',
  'order.authorized': 'authorized',
  'order.failed': 'failed',
  'order.expired': 'canceled',
  'order.voided': 'canceled',
  'order.refunded': 'not_supported',
};

/**
 * What Medusa should do for a verified event: the action, with the payment session (the order's reference)
 * and the amount in Medusa's major units. An event of an order this provider did not create (its reference is
 * not a Medusa payment session id, e.g. an order of another integration of the same account), and every
 * event that is not about an order, is `not_supported` without data, which Medusa ignores.
 */
export function webhookAction(event: Pick<WebhookEvent, 'type' | 'data'>): WebhookActionResult {
  const action = ACTIONS[event.type];
  const { reference, currency } = event.data;
  if (!action || typeof reference !== 'string' || !SESSION_ID.test(reference) || typeof currency !== 'string') return { action: 'not_supported' };
  const minor = eventAmount(event);
  if (minor === undefined) return { action: 'not_supported' };
  return { action, data: { session_id: reference, amount: fromMinorUnits(minor, currency) } };
}

/** The amount an event is about: captured for order.paid, authorized for order.authorized, refunded by this refund for order.refunded. */
function eventAmount(event: Pick<WebhookEvent, 'type' | 'data'>): number | undefined {
  const data = event.data;
  const pick = (...values: unknown[]) => values.find((v): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
  switch (event.type) {
    case 'order.paid':
      return pick(data.amount_captured, data.amount);
    case 'order.authorized':
      return pick(data.amount_authorized, data.amount);
    case 'order.refunded':
      return pick((data.refund as { amount?: unknown } | undefined)?.amount, data.amount_refunded);
    default:
      return pick(data.amount);
  }
}
