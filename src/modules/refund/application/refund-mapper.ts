import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { RefundSchema, type Refund as ProtoRefund } from '../../../gen/checkout/v1/order_pb.ts';
import type { Refund } from '../domain/refund.entity.ts';

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
