import type { Refund } from '../../../src/gen/checkout/v1/order_pb.ts';
import { isoOrNull } from '../shared/time-json.ts';

/** A refund as the REST API shows it. */
export interface RefundJson {
  id: string;
  object: 'refund';
  order: string;
  reference: string;
  amount: number;
  currency: string;
  reason: string;
  note: string | null;
  status: string;
  failure_code: string | null;
  created: string | null;
}

/** Maps the proto refund to its REST JSON. */
export function refundJson(refund: Refund): RefundJson {
  return {
    id: refund.id,
    object: 'refund',
    order: refund.orderId,
    reference: refund.reference,
    amount: Number(refund.amount),
    currency: refund.currency,
    reason: refund.reason,
    note: refund.note || null,
    status: refund.status,
    failure_code: refund.failureCode || null,
    created: isoOrNull(refund.created),
  };
}
