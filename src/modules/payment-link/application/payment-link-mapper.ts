import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import {
  PaymentLinkSchema,
  PaymentLinkStatus as ProtoStatus,
  PaymentLinkType as ProtoType,
  type CreatePaymentLinkRequest,
  type PaymentLink as ProtoPaymentLink,
} from '../../../gen/checkout/v1/payment_link_pb.ts';
import { CheckoutSchema, type Checkout } from '../../../gen/checkout/v1/checkout_pb.ts';
import { OrderSchema, OrderStatus } from '../../../gen/checkout/v1/order_pb.ts';
import type { CreatePaymentLinkCommand } from '../domain/create-payment-link.ts';
import { MAX_ATTEMPTS_PER_ORDER } from '../../payment/domain/attempt-policy.ts';
import type { MerchantRecord } from '../../merchant/ports/merchant-repository.port.ts';
import { METHOD_TO_PROTO } from '../../checkout/application/checkout-mapper.ts';
import { paymentLinkStatus, type PaymentLink, type PaymentLinkStatus, type PaymentLinkType } from '../domain/payment-link.entity.ts';

const TYPE_TO_PROTO: { readonly [T in PaymentLinkType]: ProtoType } = {
  single_use: ProtoType.SINGLE_USE,
  collecting: ProtoType.COLLECTING,
};

/** Each status's proto value; a status missing here fails the typecheck. */
export const STATUS_TO_PROTO: { readonly [S in PaymentLinkStatus]: ProtoStatus } = {
  active: ProtoStatus.ACTIVE,
  deactivated: ProtoStatus.DEACTIVATED,
  expired: ProtoStatus.EXPIRED,
  completed: ProtoStatus.COMPLETED,
};

/** Maps a link, as it stands at `now`, to its proto message. */
export function paymentLinkToProto(link: PaymentLink, now: Date): ProtoPaymentLink {
  const status = paymentLinkStatus(link, now);
  return create(PaymentLinkSchema, {
    id: link.id,
    url: link.url,
    type: TYPE_TO_PROTO[link.type],
    status: STATUS_TO_PROTO[status],
    active: status === 'active',
    amount: link.amount,
    currency: link.currency,
    reference: link.reference,
    lineItems: link.lineItems.map((item) => ({ name: item.name, amount: item.amount })),
    returnUrl: link.returnUrl ?? undefined,
    expiresAt: link.expiresAt ? timestampFromDate(link.expiresAt) : undefined,
    created: timestampFromDate(link.createdAt),
    livemode: link.livemode,
    completedPayments: BigInt(link.completedPayments),
    deactivatedAt: link.deactivatedAt ? timestampFromDate(link.deactivatedAt) : undefined,
  });
}

/** Maps a proto create request to the domain command (an unspecified or unknown type is none). */
export function createPaymentLinkCommandFromProto(req: CreatePaymentLinkRequest): CreatePaymentLinkCommand {
  return {
    amount: req.amount,
    currency: req.currency,
    reference: req.reference,
    lineItems: req.lineItems.map((item) => ({ name: item.name, amount: item.amount })),
    returnUrl: req.returnUrl,
    expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : undefined,
    type: req.type === ProtoType.SINGLE_USE ? 'single_use' : req.type === ProtoType.COLLECTING ? 'collecting' : undefined,
  };
}

/**
 * What a link's page shows before any order exists, as the checkout message the hosted pages render:
 * the link's amount, currency, reference and line items as a pending order without an id, the
 * merchant's methods, and the link's expiry. checkout_id, checkout_token and bank_transfer stay empty:
 * they belong to the order that StartPayment creates.
 */
export function linkCheckoutToProto(link: PaymentLink, merchant: MerchantRecord): Checkout {
  return create(CheckoutSchema, {
    merchantName: merchant.name,
    order: create(OrderSchema, {
      reference: link.reference,
      amount: link.amount,
      currency: link.currency,
      status: OrderStatus.PENDING,
      lineItems: link.lineItems.map((item) => ({ name: item.name, amount: item.amount })),
      returnUrl: link.returnUrl ?? undefined,
      livemode: link.livemode,
      paymentLink: link.id,
      expiresAt: link.expiresAt ? timestampFromDate(link.expiresAt) : undefined,
    }),
    methods: merchant.paymentMethods.map((m) => METHOD_TO_PROTO[m]),
    expiresAt: link.expiresAt ? timestampFromDate(link.expiresAt) : undefined,
    attemptsRemaining: MAX_ATTEMPTS_PER_ORDER,
    returnUrl: link.returnUrl ?? '',
    testMode: !link.livemode,
  });
}
