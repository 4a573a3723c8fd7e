import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  OrderService} from '../../../gen/checkout/v1/order_pb.ts';
import {
  CreateOrderResponseSchema,
  GetOrderResponseSchema,
  ListOrdersResponseSchema,
  VoidOrderRequestSchema,
  VoidOrderResponseSchema,
  CaptureOrderRequestSchema,
  CaptureOrderResponseSchema,
  ExpireOrderRequestSchema,
  ExpireOrderResponseSchema,
} from '../../../gen/checkout/v1/order_pb.ts';
import type { PaymentChange } from '../../payment/domain/payment.entity.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import type { VoidOrder } from '../../void/application/void-order.ts';
import type { CaptureOrder } from '../../capture/application/capture-order.ts';
import type { ExpireOrder } from '../../payment/application/expire-order.ts';
import type { PaymentAttempt } from '../../payment/domain/payment-attempt.entity.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import type { CreateOrderUseCase } from './create-order.ts';
import type { GetOrderUseCase } from './get-order.ts';
import type { ListOrdersUseCase } from './list-orders.ts';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from '../../../kernel/application/idempotency-key.ts';
import { orderToProto } from './order-mapper.ts';
import { createOrderCommandFromProto } from './order-command-mapper.ts';
import type { PrepareOrderCharge } from '../../customer/application/charge-saved-card.ts';

/** The use cases the order service is built on. */
export interface OrderServiceDeps {
  readonly authenticate: Authenticate;
  readonly createOrder: CreateOrderUseCase;
  readonly getOrder: GetOrderUseCase;
  readonly listOrders: ListOrdersUseCase;
  readonly voidOrder: VoidOrder;
  readonly captureOrder: CaptureOrder;
  readonly expireOrder: ExpireOrder;
  readonly idempotent: Idempotent;
  /** Checks an order's customer and saved card, and charges the card off-session (confirm). */
  readonly prepareCharge: PrepareOrderCharge;
}

/** Implements checkout.v1.OrderService over the use cases. */
export function createOrderService(deps: OrderServiceDeps): ServiceImpl<typeof OrderService> {
  const secretCaller = (ctx: HandlerContext) => deps.authenticate(ctx, 'secret');

  return {
    createOrder: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const key = ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER) ?? undefined;
      const command = createOrderCommandFromProto(req);
      const charge = await deps.prepareCharge(caller, { customerId: req.customer, cardId: req.card, confirm: req.confirm });
      const extras = charge ? [`card:${req.card}`, 'confirm'] : [];
      const result = await deps.createOrder(caller, command, key, extras);
      if (result.replayed) ctx.responseHeader.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
      // The client secret is answered to the secret key that created the order, once (see CreateOrderResponse).
      const clientSecret = result.clientSecret ?? '';
      if (!charge) return create(CreateOrderResponseSchema, { order: orderToProto(result.order), clientSecret });
      // Charged once per order (a replayed create answers the first charge's outcome), then answered as it stands.
      await charge.charge(result.order);
      const details = await deps.getOrder(caller, result.order.id);
      return create(CreateOrderResponseSchema, { order: orderToProto(details.order, details.attempts, details.refunds, details.disputes), clientSecret });
    },
    getOrder: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const details = await deps.getOrder(caller, req.id);
      return create(GetOrderResponseSchema, { order: orderToProto(details.order, details.attempts, details.refunds, details.disputes) });
    },
    listOrders: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const page = await deps.listOrders(caller, {
        limit: req.limit === 0 ? undefined : req.limit,
        startingAfter: req.startingAfter,
        reference: req.reference,
        paymentLinkId: req.paymentLink,
      });
      return create(ListOrdersResponseSchema, { orders: page.orders.map((d) => orderToProto(d.order, d.attempts, d.refunds, d.disputes)), hasMore: page.hasMore });
    },
    voidOrder: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const call = { operation: 'orders.void', input: VoidOrderRequestSchema, request: req, output: VoidOrderResponseSchema };
      let reversal: PaymentChange | undefined;
      let releases: readonly PaymentAttempt[] = [];
      await deps.idempotent(ctx, caller, call, async (tx) => {
        const held = await deps.voidOrder.hold(tx, caller, req.id);
        reversal = held.reversal;
        releases = held.releases;
        return create(VoidOrderResponseSchema, { order: orderToProto(held.order) });
      });
      // After the commit: the acquirer releases the money, then the void is recorded (or the sweeper retries it).
      if (reversal) await deps.voidOrder.reverse(reversal);
      // An authorized order was voided in the transaction; its authorization is released now.
      if (releases.length > 0) await deps.voidOrder.release(releases);
      const details = await deps.getOrder(caller, req.id);
      return create(VoidOrderResponseSchema, { order: orderToProto(details.order, details.attempts, details.refunds, details.disputes) });
    },
    captureOrder: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const call = { operation: 'orders.capture', input: CaptureOrderRequestSchema, request: req, output: CaptureOrderResponseSchema };
      // The request is what the key guards; then the acquirer is asked and the capture recorded (a
      // replay finishes a request a stopped process left, and answers the order as it now stands).
      const requested = await deps.idempotent(ctx, caller, call, async (tx) => {
        const order = await deps.captureOrder.request(tx, caller, req.id, req.amount);
        return create(CaptureOrderResponseSchema, { order: orderToProto(order) });
      });
      await deps.captureOrder.complete(requested.order!.id);
      // The order as it now stands, with its attempts (a replay answers it too).
      const details = await deps.getOrder(caller, req.id);
      return create(CaptureOrderResponseSchema, { order: orderToProto(details.order, details.attempts, details.refunds, details.disputes) });
    },
    expireOrder: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const call = { operation: 'orders.expire', input: ExpireOrderRequestSchema, request: req, output: ExpireOrderResponseSchema };
      await deps.idempotent(ctx, caller, call, async (tx, afterCommit) => {
        const order = await deps.expireOrder(tx, caller, req.id, afterCommit);
        return create(ExpireOrderResponseSchema, { order: orderToProto(order) });
      });
      // The order as it now stands, with its attempts (a canceled challenge among them); a replay answers it too.
      const details = await deps.getOrder(caller, req.id);
      return create(ExpireOrderResponseSchema, { order: orderToProto(details.order, details.attempts, details.refunds, details.disputes) });
    },
  };
}
