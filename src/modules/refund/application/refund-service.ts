import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { CreateRefundRequestSchema, CreateRefundResponseSchema, type RefundService } from '../../../gen/checkout/v1/refund_pb.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import { orderToProto } from '../../order/application/order-mapper.ts';
import { refundToProto } from './refund-mapper.ts';
import { attemptsOf } from '../../payment/application/attempts-of.ts';
import type { RefundOrder } from './refund-order.ts';

/** Implements checkout.v1.RefundService: refunds of paid orders, with Idempotency-Key. */
export function createRefundService(deps: {
  readonly authenticate: Authenticate;
  readonly idempotent: Idempotent;
  readonly refunds: RefundOrder;
  readonly payments: PaymentRepository;
}): ServiceImpl<typeof RefundService> {
  return {
    createRefund: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const call = { operation: 'refunds.create', input: CreateRefundRequestSchema, request: req, output: CreateRefundResponseSchema };
      // The reservation is what the key guards; a replay finds it and answers the refund as it now stands.
      const reserved = await deps.idempotent(ctx, caller, call, async (tx) => {
        const refund = await deps.refunds.reserve(tx, caller, req.orderId, { amount: req.amount, reason: req.reason, note: req.note });
        return create(CreateRefundResponseSchema, { refund: refundToProto(refund) });
      });
      const settled = await deps.refunds.settle(reserved.refund!.id);
      const attempts = await attemptsOf(deps.payments, settled.order.id);
      return create(CreateRefundResponseSchema, { refund: refundToProto(settled.refund), order: orderToProto(settled.order, attempts, settled.refunds) });
    },
  };
}
