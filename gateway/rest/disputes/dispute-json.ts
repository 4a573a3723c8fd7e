import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Dispute, Evidence, MerchantEvidence } from '../../../src/gen/checkout/v1/dispute_pb.ts';
import { isoOrNull } from '../shared/time-json.ts';
import type { EvidenceBody } from './schemas.ts';

/** An order's evidence as the REST API shows it. */
export interface EvidenceJson {
  object: 'evidence';
  order: string;
  customer_email: string | null;
  customer_name: string | null;
  shipping_carrier: string | null;
  tracking_number: string | null;
  delivered_at: string | null;
  product_description: string | null;
  notes: string | null;
  /** What the service knows itself. */
  service: {
    authentication: string | null;
    paid_at: string | null;
    customer_ip: string | null;
    receipt_url: string | null;
    card_brand: string | null;
    card_last4: string | null;
  };
  updated: string | null;
}

/** A dispute as the REST API shows it. */
export interface DisputeJson {
  id: string;
  object: 'dispute';
  order: string;
  reference: string;
  amount: number;
  currency: string;
  reason: string;
  status: string;
  evidence_due_by: string | null;
  evidence: EvidenceJson | null;
  submission_count: number;
  fee: number;
  fee_currency: string;
  livemode: boolean;
  created: string | null;
  closed: string | null;
}

/** Maps the proto evidence to its REST JSON. */
export function evidenceJson(evidence: Evidence): EvidenceJson {
  const m = evidence.merchant;
  const s = evidence.service;
  return {
    object: 'evidence',
    order: evidence.orderId,
    customer_email: m?.customerEmail ?? null,
    customer_name: m?.customerName ?? null,
    shipping_carrier: m?.shippingCarrier ?? null,
    tracking_number: m?.trackingNumber ?? null,
    delivered_at: isoOrNull(m?.deliveredAt),
    product_description: m?.productDescription ?? null,
    notes: m?.notes ?? null,
    service: {
      authentication: s?.authentication || null,
      paid_at: isoOrNull(s?.paidAt),
      customer_ip: s?.customerIp || null,
      receipt_url: s?.receiptUrl || null,
      card_brand: s?.cardBrand || null,
      card_last4: s?.cardLast4 || null,
    },
    updated: isoOrNull(evidence.updated),
  };
}

/** Maps the proto dispute to its REST JSON. */
export function disputeJson(dispute: Dispute): DisputeJson {
  return {
    id: dispute.id,
    object: 'dispute',
    order: dispute.orderId,
    reference: dispute.reference,
    amount: Number(dispute.amount),
    currency: dispute.currency,
    reason: dispute.reason,
    status: dispute.status,
    evidence_due_by: isoOrNull(dispute.evidenceDueBy),
    evidence: dispute.evidence ? evidenceJson(dispute.evidence) : null,
    submission_count: dispute.submissionCount,
    fee: Number(dispute.fee),
    fee_currency: dispute.feeCurrency,
    livemode: dispute.livemode,
    created: isoOrNull(dispute.created),
    closed: isoOrNull(dispute.closed),
  };
}

/** Maps a REST evidence body to the proto message: null and absent fields are kept, "" clears. */
export function evidenceFromBody(body: EvidenceBody | undefined): Partial<MerchantEvidence> {
  if (!body) return {};
  return {
    customerEmail: body.customer_email ?? undefined,
    customerName: body.customer_name ?? undefined,
    shippingCarrier: body.shipping_carrier ?? undefined,
    trackingNumber: body.tracking_number ?? undefined,
    deliveredAt: body.delivered_at ? timestampFromDate(new Date(body.delivered_at)) : undefined,
    productDescription: body.product_description ?? undefined,
    notes: body.notes ?? undefined,
  };
}
