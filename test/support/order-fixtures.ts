// Builders of the order that tests and benches create, one per wire: the REST JSON body of
// POST /v1/orders and the Connect CreateOrderRequest. Both describe the same order; a test
// passes as overrides the values it asserts on, so they stay visible in the test.
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { CreateOrderRequestSchema, type CreateOrderRequest } from '../../src/gen/checkout/v1/order_pb.ts';

/** The default order: 25.00 EUR for two line items that add up to it. */
const ORDER = {
  amount: 2500,
  currency: 'EUR',
  reference: 'INV-1001',
  lineItems: [
    { name: 'Green tea', amount: 1500 },
    { name: 'Teapot', amount: 1000 },
  ],
  returnUrl: 'https://shop.example/thanks',
} as const;

/** A valid JSON body of POST /v1/orders (snake_case, amounts as JSON numbers); override any field. */
export function orderBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: ORDER.amount,
    currency: ORDER.currency,
    reference: ORDER.reference,
    line_items: ORDER.lineItems.map((item) => ({ ...item })),
    return_url: ORDER.returnUrl,
    ...overrides,
  };
}

/** The same order as a Connect OrderService.CreateOrder request (amounts as bigint); override any field. */
export function orderRequest(overrides: Omit<MessageInitShape<typeof CreateOrderRequestSchema>, '$typeName'> = {}): CreateOrderRequest {
  return create(CreateOrderRequestSchema, {
    amount: BigInt(ORDER.amount),
    currency: ORDER.currency,
    reference: ORDER.reference,
    lineItems: ORDER.lineItems.map((item) => ({ name: item.name, amount: BigInt(item.amount) })),
    returnUrl: ORDER.returnUrl,
    ...overrides,
  });
}
