// The PaymentMethodHandler: each Vendure payment is one order of ours, created over Connect.
import { Code, ConnectError } from '@connectrpc/connect';
import { LanguageCode, Payment, PaymentMethodHandler, TransactionalConnection, type Injector, type Order } from '@vendure/core';
import { OrderStatus, type Order as CheckoutOrder } from '../gen/checkout/v1/order_pb.ts';
import type { CheckoutClients, CheckoutPaymentPluginOptions } from './options.ts';

/** The handler's code: the `handler.code` of a Vendure PaymentMethod that pays through the service. */
export const CHECKOUT_HANDLER_CODE = 'checkout-hosted';

/** What the handler needs from the plugin, once it is initialised. */
export interface HandlerContext {
  readonly options: CheckoutPaymentPluginOptions;
  readonly clients: CheckoutClients;
}

/** Our order's status as the word the REST API and the metadata use. */
export function statusName(status: OrderStatus): string {
  const name = Object.entries(OrderStatus).find(([, value]) => value === status)?.[0] ?? 'UNSPECIFIED';
  return name.toLowerCase();
}

/** Paid, and possibly refunded since: the money was taken. */
export function isPaid(order: CheckoutOrder): boolean {
  return order.status === OrderStatus.PAID || order.status === OrderStatus.PARTIALLY_REFUNDED || order.status === OrderStatus.REFUNDED;
}

/** A failure of the network or of the service, which a retry with the same idempotency key may cure. */
function isTransient(err: unknown): boolean {
  const code = ConnectError.from(err).code;
  return code === Code.Unavailable || code === Code.DeadlineExceeded || code === Code.Unknown || code === Code.Internal || code === Code.Aborted;
}

/** Runs a call, retrying a transient failure twice (the caller reuses its idempotency key, so nothing is done twice). */
async function withRetries<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= 2 || !isTransient(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt + Math.random() * 100));
    }
  }
}

/** A refund reason of the service for Vendure's free-text one (which travels as the note). */
const REFUND_REASON = 'requested_by_customer';

/**
 * Creates the handler over the plugin's context (read at call time: the plugin is initialised
 * before Vendure boots, the handler object exists before that).
 */
export function createCheckoutPaymentHandler(context: () => HandlerContext): PaymentMethodHandler {
  let injector: Injector | undefined;
  return new PaymentMethodHandler({
    code: CHECKOUT_HANDLER_CODE,
    description: [{ languageCode: LanguageCode.en, value: 'Hosted checkout (card, wallet, bank transfer)' }],
    args: {},
    init(i) {
      injector = i;
    },

    async createPayment(ctx, order, amount) {
      const { clients, options } = context();
      // The attempt is the number of payments the order already has: a retry of the same addPaymentToOrder
      // (whose transaction rolled back) finds the same number and so the same key, hence the same order of ours.
      const attempt = await injector!.get(TransactionalConnection).getRepository(ctx, Payment).count({ where: { order: { id: order.id } } });
      const idempotencyKey = `vendure:${order.code}:payment:${attempt + 1}`;
      const returnUrl = options.returnUrl?.(order);
      let created;
      try {
        created = await withRetries(() =>
          clients.orders.createOrder(
            { amount: BigInt(amount), currency: order.currencyCode, reference: order.code, ...(returnUrl ? { returnUrl } : {}) },
            clients.callOptions(idempotencyKey),
          ),
        );
      } catch (err) {
        // Still failing on the network: fail the mutation (nothing is saved), so the shopper's retry reuses the key.
        if (isTransient(err)) throw err;
        const error = ConnectError.from(err);
        return { amount, state: 'Declined' as const, errorMessage: `The checkout service refused the order (${Code[error.code]}): ${error.rawMessage}` };
      }
      const ours = created.order!;
      return {
        amount,
        state: 'Authorized' as const,
        transactionId: ours.id,
        metadata: {
          checkoutOrderId: ours.id,
          checkoutStatus: statusName(ours.status),
          idempotencyKey,
          // Public metadata reaches the storefront: redirect to checkoutUrl, or pay in embedded fields
          // with the publishable key and the client secret (absent when the call was an idempotent replay).
          public: { checkoutOrderId: ours.id, checkoutUrl: ours.checkoutUrl, ...(created.clientSecret ? { clientSecret: created.clientSecret } : {}) },
        },
      };
    },

    async settlePayment(_ctx, _order, payment) {
      // Settled only once our order is paid: the webhook settles on order.paid, and an admin pressing
      // "settle" on an unpaid payment is refused.
      const { clients } = context();
      try {
        const { order } = await withRetries(() => clients.orders.getOrder({ id: payment.transactionId }, clients.callOptions()));
        if (!order || !isPaid(order)) {
          return { success: false as const, state: 'Authorized' as const, errorMessage: `Order ${payment.transactionId} is ${order ? statusName(order.status) : 'unknown'} at the checkout service, not paid.` };
        }
        return { success: true as const, metadata: { checkoutStatus: statusName(order.status), method: order.method ?? '' } };
      } catch (err) {
        return { success: false as const, state: 'Authorized' as const, errorMessage: ConnectError.from(err).message };
      }
    },

    async cancelPayment(_ctx, vendureOrder, payment) {
      const { clients } = context();
      const read = async () => (await withRetries(() => clients.orders.getOrder({ id: payment.transactionId }, clients.callOptions()))).order;
      try {
        let order = await read();
        if (!order) return { success: false as const, errorMessage: `Order ${payment.transactionId} is unknown to the checkout service.` };
        let expireRequested = false;
        if (order.status === OrderStatus.PENDING || order.status === OrderStatus.FAILED) {
          // Unpaid: our order is closed now (ExpireOrder), so that its checkout takes no payment any more.
          const open = order;
          try {
            expireRequested = true;
            order = (await withRetries(() => clients.orders.expireOrder({ id: open.id }, clients.callOptions(`vendure:${vendureOrder.code}:cancel:${payment.id}`)))).order!;
          } catch (err) {
            // The customer paid first (order_not_open): voided below. Anything else (a card payment still in
            // flight: payment_in_progress) fails the cancellation, which the admin can retry.
            order = await read();
            if (!order || (order.status !== OrderStatus.PAID && order.status !== OrderStatus.AUTHORIZED)) throw err;
          }
        }
        if (order.status === OrderStatus.PAID || order.status === OrderStatus.AUTHORIZED) {
          const id = order.id;
          const voided = await withRetries(() => clients.orders.voidOrder({ id }, clients.callOptions()));
          return { success: true as const, metadata: { checkoutStatus: statusName(voided.order!.status), voidRequested: true, expireRequested } };
        }
        // Expired now (or before), refunded or voided: nothing is left to take. Should a payment still
        // reach a canceled order, the webhook route voids it.
        return { success: true as const, metadata: { checkoutStatus: statusName(order.status), voidRequested: false, expireRequested } };
      } catch (err) {
        return { success: false as const, errorMessage: ConnectError.from(err).message };
      }
    },

    async createRefund(_ctx, input, amount, order: Order, payment) {
      const { clients } = context();
      // Vendure saves the Refund only after this call, so its id is not known yet: the key is the payment's
      // n-th refund instead. A retried mutation (rolled back) reuses n; a failed refund is saved and moves n on.
      const nth = (payment.refunds?.length ?? 0) + 1;
      const idempotencyKey = `vendure:${order.code}:refund:${payment.id}:${nth}`;
      try {
        const { refund } = await withRetries(() =>
          clients.refunds.createRefund(
            { orderId: payment.transactionId, amount: BigInt(amount), reason: REFUND_REASON, note: (input.reason ?? '').slice(0, 500) },
            clients.callOptions(idempotencyKey),
          ),
        );
        const state = refund!.status === 'succeeded' ? ('Settled' as const) : refund!.status === 'failed' || refund!.status === 'canceled' ? ('Failed' as const) : ('Pending' as const);
        return { state, transactionId: refund!.id, metadata: { checkoutRefundId: refund!.id, checkoutStatus: refund!.status, idempotencyKey, failureCode: refund!.failureCode } };
      } catch (err) {
        const error = ConnectError.from(err);
        return { state: 'Failed' as const, metadata: { errorCode: Code[error.code], errorMessage: error.rawMessage, idempotencyKey } };
      }
    },
  });
}
