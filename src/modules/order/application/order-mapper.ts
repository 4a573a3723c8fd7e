import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import {
  OrderSchema,
  PaymentAttemptSchema,
  RefundSchema,
  type Refund as ProtoRefund,
  type PaymentAttempt as ProtoPaymentAttempt,
  OrderStatus as ProtoOrderStatus,
  CaptureMethod as ProtoCaptureMethod,
  type CreateOrderRequest,
  type Order as ProtoOrder,
} from '../../../gen/checkout/v1/order_pb.ts';
import type { CreateOrderCommand } from '../domain/create-order.ts';
import type { CaptureMethod, Order, OrderStatus } from '../domain/order.entity.ts';
import type { PaymentAttempt } from '../../payment/domain/payment-attempt.entity.ts';
import type { Refund } from '../../refund/domain/refund.entity.ts';
import type { Dispute } from '../../dispute/domain/dispute.entity.ts';
import { disputeToProto } from '../../dispute/application/dispute-mapper.ts';

const STATUS_TO_PROTO: { readonly [S in OrderStatus]: ProtoOrderStatus } = {
  pending: ProtoOrderStatus.PENDING,
  paid: ProtoOrderStatus.PAID,
  expired: ProtoOrderStatus.EXPIRED,
  failed: ProtoOrderStatus.FAILED,
  authorized: ProtoOrderStatus.AUTHORIZED,
  partially_refunded: ProtoOrderStatus.PARTIALLY_REFUNDED,
  refunded: ProtoOrderStatus.REFUNDED,
  voided: ProtoOrderStatus.VOIDED,
};

const CAPTURE_METHOD_TO_PROTO: { readonly [M in CaptureMethod]: ProtoCaptureMethod } = {
  automatic: ProtoCaptureMethod.AUTOMATIC,
  manual: ProtoCaptureMethod.MANUAL,
};

/** Maps a payment attempt to its proto message. */
export function attemptToProto(attempt: PaymentAttempt): ProtoPaymentAttempt {
  return create(PaymentAttemptSchema, {
    id: attempt.id,
    method: attempt.method,
    route: attempt.route,
    status: attempt.status,
    declineCode: attempt.declineCode ?? '',
    authentication: attempt.authentication,
    cardBrand: attempt.cardBrand ?? '',
    cardLast4: attempt.cardLast4 ?? '',
    retry: attempt.retry,
    cardId: attempt.savedCardId ?? '',
    created: timestampFromDate(attempt.createdAt),
  });
}

/** Maps a domain order (and its attempts, when known) to its proto message. */
export function orderToProto(order: Order, attempts: readonly PaymentAttempt[] = [], refunds: readonly Refund[] = [], disputes: readonly Dispute[] = []): ProtoOrder {
  return create(OrderSchema, {
    id: order.id,
    reference: order.reference,
    amount: order.amount,
    currency: order.currency,
    status: STATUS_TO_PROTO[order.status],
    checkoutUrl: order.checkoutUrl,
    lineItems: order.lineItems.map((item) => ({ name: item.name, amount: item.amount })),
    returnUrl: order.returnUrl ?? undefined,
    created: timestampFromDate(order.createdAt),
    livemode: order.livemode,
    method: order.method ?? undefined,
    settlement: order.settlement ? { currency: order.settlement.currency, amount: order.settlement.amount } : undefined,
    expiresAt: timestampFromDate(order.expiresAt),
    attempts: attempts.map(attemptToProto),
    amountRefunded: order.amountRefunded,
    refunds: refunds.map(refundToProto),
    captureMethod: CAPTURE_METHOD_TO_PROTO[order.captureMethod],
    amountCaptured: order.amountCaptured ?? undefined,
    authorizationExpiresAt: order.authorizationExpiresAt ? timestampFromDate(order.authorizationExpiresAt) : undefined,
    // On the order, each dispute shows its submitted evidence only; GET /v1/disputes/:id shows the current.
    disputes: disputes.map((dispute) => disputeToProto(dispute, undefined)),
    paymentLink: order.paymentLinkId ?? undefined,
    subscription: order.subscriptionId ?? undefined,
    subscriptionCycle: order.subscriptionCycle ?? undefined,
    customer: order.customerId ?? undefined,
  });
}

/** Maps a refund to its proto message. */
export function refundToProto(refund: Refund): ProtoRefund {
  return create(RefundSchema, {
    id: refund.id,
    orderId: refund.orderId,
    reference: refund.reference,
    amount: refund.amount,
    currency: refund.currency,
    reason: refund.reason,
    note: refund.note,
    status: refund.status,
    created: timestampFromDate(refund.createdAt),
    failureCode: refund.failureCode ?? '',
  });
}

/** Maps a proto create request to the domain command. */
export function createOrderCommandFromProto(req: CreateOrderRequest): CreateOrderCommand {
  return {
    amount: req.amount,
    currency: req.currency,
    reference: req.reference,
    lineItems: req.lineItems.map((item) => ({ name: item.name, amount: item.amount })),
    returnUrl: req.returnUrl,
    expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : undefined,
    captureMethod: req.captureMethod === ProtoCaptureMethod.MANUAL ? 'manual' : 'automatic',
    customerId: req.customer,
  };
}
