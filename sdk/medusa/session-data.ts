// What the provider keeps in a Medusa payment session's (then payment's) `data`, and how our order's
// status reads in Medusa's terms.
import type { CreatedOrder, Order } from '@hosted-checkout/node';
import type { PaymentSessionStatus } from '@medusajs/framework/types';

/**
 * The `data` of a payment session or payment of this provider. Medusa's store API shows a session's data to the
 * storefront: `checkout_url` (the hosted page) and, until the order is paid, `client_secret` (for the embedded
 * fields or the mobile SDK, with your publishable key) are meant for it; nothing here is secret to the merchant.
 */
export type CheckoutSessionData = {
  /** Our order (ord_…). */
  readonly checkout_order_id: string;
  /** The hosted checkout page of the order. */
  readonly checkout_url: string;
  /** Pays this one order with the publishable key; only in the answer that created the order, and dropped once it is paid. */
  readonly client_secret?: string;
  /** Medusa's payment session: the order's reference on our side. */
  readonly session_id: string;
  /** Our order's status when Medusa last asked. */
  readonly checkout_status: Order['status'];
  /** The order's amount in minor units, and its currency (uppercase). */
  readonly amount: number;
  readonly currency: string;
  readonly capture_method: Order['capture_method'];
  /** Minor units captured and refunded so far, once paid. */
  readonly amount_captured?: number | null;
  readonly amount_refunded?: number;
  readonly livemode: boolean;
};

/** The session data of an order; `previous` keeps a client secret the storefront may still need. */
export function sessionData(order: Order | CreatedOrder, sessionId: string, previous?: Partial<CheckoutSessionData>): CheckoutSessionData {
  const clientSecret = 'client_secret' in order && order.client_secret ? order.client_secret : previous?.client_secret;
  return {
    checkout_order_id: order.id,
    checkout_url: order.checkout_url,
    // Once the order is no longer payable the secret opens nothing: it is not kept in Medusa's payment.
    ...(clientSecret && isPayable(order.status) ? { client_secret: clientSecret } : {}),
    session_id: sessionId,
    checkout_status: order.status,
    amount: order.amount,
    currency: order.currency,
    capture_method: order.capture_method,
    amount_captured: order.amount_captured,
    amount_refunded: order.amount_refunded,
    livemode: order.livemode,
  };
}

/**
 * The session data Medusa hands back to the provider, with our order id checked.
 * @throws TypeError when it names no order of ours (a session this provider did not initiate)
 */
export function readSessionData(data: Record<string, unknown> | undefined): Partial<CheckoutSessionData> & Pick<CheckoutSessionData, 'checkout_order_id'> {
  const orderId = data?.checkout_order_id;
  if (typeof orderId !== 'string' || !orderId.startsWith('ord_')) {
    throw new TypeError('this payment\'s data names no order of the hosted checkout (checkout_order_id): was it initiated by this provider?');
  }
  return data as Partial<CheckoutSessionData> & Pick<CheckoutSessionData, 'checkout_order_id'>;
}

/** Whether the customer can still pay the order (pending, or failed before it expires). */
export function isPayable(status: Order['status']): boolean {
  return status === 'pending' || status === 'failed';
}

/**
 * Our order's status as a Medusa payment session status:
 * - `paid` and `partially_refunded` → `captured` (the money was taken);
 * - `authorized` (capture method manual) → `authorized`;
 * - `pending` with a payment under way (a card in 3-D Secure or still processing) → `pending`;
 * - `pending` with nothing under way, or `failed` (the customer may try again until it expires) → `requires_more`:
 *   the customer has to pay at `checkout_url`;
 * - `expired`, `voided`, `refunded` → `canceled`.
 */
export function sessionStatus(order: Pick<Order, 'status'> & { attempts?: Order['attempts'] }): PaymentSessionStatus {
  switch (order.status) {
    case 'paid':
    case 'partially_refunded':
      return 'captured';
    case 'authorized':
      return 'authorized';
    case 'pending': {
      const underWay = (order.attempts ?? []).some((a) => a.status === 'processing' || a.status === 'requires_authentication');
      return underWay ? 'pending' : 'requires_more';
    }
    case 'failed':
      return 'requires_more';
    case 'expired':
    case 'voided':
    case 'refunded':
      return 'canceled';
  }
}
