import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { DisputeSchema, EvidenceSchema, type Dispute as ProtoDispute, type Evidence as ProtoEvidence, type MerchantEvidence as ProtoMerchantEvidence } from '../../../gen/checkout/v1/dispute_pb.ts';
import type { Dispute } from '../domain/dispute.entity.ts';
import type { Evidence, EvidenceUpdate } from '../domain/evidence.ts';

/** Maps an order's evidence to its proto message. */
export function evidenceToProto(evidence: Evidence): ProtoEvidence {
  const m = evidence.merchant;
  const s = evidence.service;
  return create(EvidenceSchema, {
    orderId: evidence.orderId,
    merchant: {
      customerEmail: m.customer_email ?? undefined,
      customerName: m.customer_name ?? undefined,
      shippingCarrier: m.shipping_carrier ?? undefined,
      trackingNumber: m.tracking_number ?? undefined,
      deliveredAt: m.delivered_at ? timestampFromDate(m.delivered_at) : undefined,
      productDescription: m.product_description ?? undefined,
      notes: m.notes ?? undefined,
    },
    service: {
      authentication: s.authentication ?? '',
      paidAt: s.paidAt ? timestampFromDate(s.paidAt) : undefined,
      customerIp: s.customerIp ?? '',
      receiptUrl: s.receiptUrl,
      cardBrand: s.cardBrand ?? '',
      cardLast4: s.cardLast4 ?? '',
    },
    updated: evidence.updatedAt ? timestampFromDate(evidence.updatedAt) : undefined,
  });
}

/** Maps a dispute (and the evidence it shows: as submitted, else the order's now) to its proto message. */
export function disputeToProto(dispute: Dispute, current: Evidence | undefined): ProtoDispute {
  const evidence = dispute.submittedEvidence ?? current;
  return create(DisputeSchema, {
    id: dispute.id,
    orderId: dispute.orderId,
    reference: dispute.reference,
    amount: dispute.amount,
    currency: dispute.currency,
    reason: dispute.reason,
    status: dispute.status,
    evidenceDueBy: timestampFromDate(dispute.evidenceDueBy),
    evidence: evidence ? evidenceToProto(evidence) : undefined,
    submissionCount: dispute.submissionCount,
    fee: dispute.fee.amount,
    feeCurrency: dispute.fee.currency,
    livemode: dispute.livemode,
    created: timestampFromDate(dispute.createdAt),
    closed: dispute.closedAt ? timestampFromDate(dispute.closedAt) : undefined,
  });
}

/** Maps the proto evidence of a request to the domain's update (absent fields are kept). */
export function evidenceUpdateFromProto(evidence: ProtoMerchantEvidence | undefined): EvidenceUpdate {
  if (!evidence) return {};
  return {
    customer_email: evidence.customerEmail,
    customer_name: evidence.customerName,
    shipping_carrier: evidence.shippingCarrier,
    tracking_number: evidence.trackingNumber,
    delivered_at: evidence.deliveredAt ? timestampDate(evidence.deliveredAt) : undefined,
    product_description: evidence.productDescription,
    notes: evidence.notes,
  };
}
