import { timestampDate } from '@bufbuild/protobuf/wkt';
import { CaptureMethod as ProtoCaptureMethod, type CreateOrderRequest } from '../../../gen/checkout/v1/order_pb.ts';
import type { CreateOrderCommand } from '../domain/create-order.ts';

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
