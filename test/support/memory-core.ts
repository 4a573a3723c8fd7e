// The use cases of orders, payments, refunds, captures and voids composed over the in-memory fakes
// (test/support/fakes), as src/composition/core.ts composes them over Postgres: what the use-case tests
// (test/use-cases/) drive, in milliseconds. The two routes are ScriptedProcessors the test steers.
// When the composition changes (issue 21: modules, the payment path in stages), this file follows it.
import { createHandlerContext, type HandlerContext } from '@connectrpc/connect';
import { createIdempotent } from '../../src/kernel/application/idempotent.ts';
import { RefundService } from '../../src/gen/checkout/v1/refund_pb.ts';
import { createCaptureOrder } from '../../src/modules/capture/application/capture-order.ts';
import { createAuthenticate } from '../../src/modules/merchant/application/authenticate.ts';
import { createCreateOrder } from '../../src/modules/order/application/create-order.ts';
import { IDEMPOTENCY_KEY_HEADER } from '../../src/kernel/application/idempotency-key.ts';
import { createPayments } from '../../src/modules/payment/application/payments.ts';
import { DEFAULT_VELOCITY_LIMITS } from '../../src/modules/payment/domain/velocity.ts';
import { createRefundOrder } from '../../src/modules/refund/application/refund-order.ts';
import { createRefundService } from '../../src/modules/refund/application/refund-service.ts';
import { createVoidOrder } from '../../src/modules/void/application/void-order.ts';
import { memoryWorld, ScriptedProcessor, type MemoryWorld } from './fakes/index.ts';

/** The use cases over one in-memory world, with the processors behind its routes. */
export function memoryCore(world: MemoryWorld = memoryWorld()) {
  const primary = new ScriptedProcessor('scripted_primary');
  const alternative = new ScriptedProcessor('scripted_alternative');
  /** Faults the use cases hand to the background (an acquirer that did not answer, a release that failed). */
  const backgroundErrors: unknown[] = [];
  const payments = createPayments({
    uow: world.uow,
    reads: { orders: world.reads.orders, payments: world.reads.payments },
    ids: world.ids,
    clock: world.clock,
    merchants: world.merchants,
    testCards: world.merchants,
    processors: { test: [primary, alternative], live: [] },
    velocity: DEFAULT_VELOCITY_LIMITS,
    onBackgroundError: (err) => void backgroundErrors.push(err),
  });
  const refundOrder = createRefundOrder(payments.parts, { refunds: world.reads.refunds });
  const idempotent = createIdempotent(world.uow);
  const authenticate = createAuthenticate({ keys: world.merchants });
  return {
    world,
    primary,
    alternative,
    backgroundErrors,
    payments,
    createOrder: createCreateOrder({ store: world.orderCreation, ids: world.ids, clock: world.clock }),
    refundOrder,
    captureOrder: createCaptureOrder(payments.parts),
    voidOrder: createVoidOrder(payments.parts),
    expireOrder: payments.expireOrder,
    idempotent,
    refundService: createRefundService({ authenticate, idempotent, refunds: refundOrder, payments: world.reads.payments }),
  };
}

/** A memoryCore. */
export type MemoryCore = ReturnType<typeof memoryCore>;

/** A Connect handler context of RefundService.CreateRefund with the caller's key and, when given, an Idempotency-Key. */
export function refundContext(apiKey: string, idempotencyKey?: string): HandlerContext {
  return createHandlerContext({
    service: RefundService,
    method: RefundService.method.createRefund,
    protocolName: 'connect',
    requestMethod: 'POST',
    url: 'http://127.0.0.1/checkout.v1.RefundService/CreateRefund',
    requestHeader: { authorization: `Bearer ${apiKey}`, ...(idempotencyKey ? { [IDEMPOTENCY_KEY_HEADER]: idempotencyKey } : {}) },
  });
}
