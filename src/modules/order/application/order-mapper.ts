import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { OrderSchema, OrderStatus as ProtoOrderStatus, CaptureMethod as ProtoCaptureMethod, type Order as ProtoOrder } from '../../../gen/checkout/v1/order_pb.ts';
import type { CaptureMethod, Order, OrderStatus } from '../domain/order.entity.ts';
import type { PaymentAttempt } from '../../payment/domain/payment-attempt.entity.ts';
import type { Refund } from '../../refund/domain/refund.entity.ts';
import type { Dispute } from '../../dispute/domain/dispute.entity.ts';
import { disputeToProto } from '../../dispute/application/dispute-mapper.ts';
import { attemptToProto } from '../../payment/application/attempt-mapper.ts';
import { refundToProto } from '../../refund/application/refund-mapper.ts';

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
