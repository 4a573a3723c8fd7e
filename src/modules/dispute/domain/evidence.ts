import type { JsonValue } from '../../event/domain/domain-event.ts';
import { DomainError, invalid } from '../../../kernel/domain/domain-error.ts';

/** The text fields of the merchant's evidence, with the most characters each may hold. */
export const EVIDENCE_TEXT_LIMITS = {
  customer_email: 254,
  customer_name: 255,
  shipping_carrier: 100,
  tracking_number: 100,
  product_description: 2000,
  notes: 5000,
} as const;

/** A text field of the merchant's evidence, in the API's snake_case spelling. */
export type EvidenceTextField = keyof typeof EVIDENCE_TEXT_LIMITS;

/** What the merchant says about an order, to answer a dispute; null where nothing was said. */
export type MerchantEvidence = { readonly [F in EvidenceTextField]: string | null } & { readonly delivered_at: Date | null };

/** Nothing said yet. */
export const NO_MERCHANT_EVIDENCE: MerchantEvidence = {
  customer_email: null,
  customer_name: null,
  shipping_carrier: null,
  tracking_number: null,
  delivered_at: null,
  product_description: null,
  notes: null,
};

/** A change of the merchant's evidence: a field absent (undefined) is kept, an empty string clears it. */
export type EvidenceUpdate = { readonly [F in EvidenceTextField]?: string | undefined } & { readonly delivered_at?: Date | undefined };

/** What the service knows itself about the order's payment. */
export interface ServiceEvidence {
  /** The 3-D Secure outcome of the attempt that paid (not_required, passed, …). */
  readonly authentication: string | null;
  /** When the order was paid. */
  readonly paidAt: Date | null;
  /** The customer's address as the checkout counted it (an IPv6 address by its /64); null for server-side payments. */
  readonly customerIp: string | null;
  /** The order's checkout page, which shows the receipt once paid. */
  readonly receiptUrl: string;
  readonly cardBrand: string | null;
  readonly cardLast4: string | null;
}

/** An order's evidence: the merchant's and the service's. */
export interface Evidence {
  readonly orderId: string;
  readonly merchant: MerchantEvidence;
  readonly service: ServiceEvidence;
  /** When the merchant last changed it; null if never. */
  readonly updatedAt: Date | null;
}

const TEXT_FIELDS = Object.keys(EVIDENCE_TEXT_LIMITS) as EvidenceTextField[];
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * Merges an update into the merchant's evidence: a field given replaces the stored one (trimmed), an
 * empty string clears it, an absent one is kept.
 * @throws DomainError evidence.field_invalid naming the field
 */
export function mergeEvidence(current: MerchantEvidence, update: EvidenceUpdate): MerchantEvidence {
  const next: Record<string, string | Date | null> = { ...current };
  for (const field of TEXT_FIELDS) {
    const value = update[field];
    if (value === undefined) continue;
    const text = value.trim();
    if (!text.isWellFormed() || text.includes('\u0000')) throw invalid('evidence.field_invalid', field, `${field} must be valid Unicode text without NUL characters.`);
    if ([...text].length > EVIDENCE_TEXT_LIMITS[field]) throw invalid('evidence.field_invalid', field, `${field} holds at most ${EVIDENCE_TEXT_LIMITS[field]} characters.`);
    if (field === 'customer_email' && text !== '' && !EMAIL.test(text)) throw invalid('evidence.field_invalid', field, 'customer_email must be an email address, e.g. jane@example.com.');
    next[field] = text === '' ? null : text;
  }
  if (update.delivered_at !== undefined) {
    if (Number.isNaN(update.delivered_at.getTime())) throw new DomainError('evidence.field_invalid', 'delivered_at must be a time.', 'delivered_at');
    next.delivered_at = update.delivered_at;
  }
  return next as MerchantEvidence;
}

/** True when the update changes nothing (no field given). */
export function isEmptyUpdate(update: EvidenceUpdate): boolean {
  return TEXT_FIELDS.every((f) => update[f] === undefined) && update.delivered_at === undefined;
}

/** Every text of the evidence, joined: what test mode reads `winning_evidence` / `losing_evidence` in. */
export function evidenceText(merchant: MerchantEvidence): string {
  return TEXT_FIELDS.map((f) => merchant[f] ?? '').join('\n');
}

/** The evidence as events and the REST API show it: snake_case, times in ISO 8601. */
export function evidenceJson(evidence: Pick<Evidence, 'merchant' | 'service'>): { [key: string]: JsonValue } {
  const m = evidence.merchant;
  const s = evidence.service;
  return {
    merchant: {
      customer_email: m.customer_email,
      customer_name: m.customer_name,
      shipping_carrier: m.shipping_carrier,
      tracking_number: m.tracking_number,
      delivered_at: m.delivered_at?.toISOString() ?? null,
      product_description: m.product_description,
      notes: m.notes,
    },
    service: {
      authentication: s.authentication,
      paid_at: s.paidAt?.toISOString() ?? null,
      customer_ip: s.customerIp,
      receipt_url: s.receiptUrl,
      card_brand: s.cardBrand,
      card_last4: s.cardLast4,
    },
  };
}

/** What the service knows of an order's paying attempt: its 3-D Secure outcome, time, address and card. */
export function serviceEvidence(
  order: { readonly checkoutUrl: string },
  paid: { readonly payment: { readonly clientAddress: string | null; readonly capture: { readonly capturedAt: Date } | null; readonly updatedAt: Date }; readonly attempts: ReadonlyArray<{ readonly status: string; readonly authentication: string; readonly cardBrand: string | null; readonly cardLast4: string | null }> } | undefined,
): ServiceEvidence {
  const leg = paid?.attempts.find((a) => a.status === 'succeeded');
  return {
    authentication: leg?.authentication ?? null,
    paidAt: paid ? (paid.payment.capture?.capturedAt ?? paid.payment.updatedAt) : null,
    customerIp: paid?.payment.clientAddress ?? null,
    receiptUrl: order.checkoutUrl,
    cardBrand: leg?.cardBrand ?? null,
    cardLast4: leg?.cardLast4 ?? null,
  };
}
