import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import {
  PaymentLinkSchema,
  PaymentLinkStatus as ProtoStatus,
  PaymentLinkType as ProtoType,
  type CreatePaymentLinkRequest,
  type PaymentLink as ProtoPaymentLink,
} from '../../gen/checkout/v1/payment_link_pb.ts';
import type { CreatePaymentLinkCommand } from '../../domain/payment-link/create-payment-link.ts';
import { paymentLinkStatus, type PaymentLink, type PaymentLinkStatus, type PaymentLinkType } from '../../domain/payment-link/payment-link.entity.ts';

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
