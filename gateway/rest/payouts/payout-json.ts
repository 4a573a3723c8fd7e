import type { Payout, PayoutItem } from '../../../src/gen/checkout/v1/payout_pb.ts';
import { isoOrNull } from '../shared/time-json.ts';

/** A payout item as the REST API shows it. */
export function payoutItemJson(item: PayoutItem) {
  const fees = { percentage: Number(item.percentageFee), fixed: Number(item.fixedFee), other: Number(item.otherFees) };
  return {
    id: item.id,
    object: 'payout_item' as const,
    type: item.type,
    order: item.orderId ?? null,
    refund: item.refundId ?? null,
    dispute: item.disputeId ?? null,
    reference: item.reference ?? null,
    currency: item.currency,
    gross: Number(item.gross),
    fees: { ...fees, total: fees.percentage + fees.fixed + fees.other },
    net: Number(item.net),
    created: isoOrNull(item.created),
  };
}

/** A payout as the REST API shows it. */
export function payoutJson(payout: Payout) {
  const t = payout.totals!;
  return {
    id: payout.id,
    object: 'payout' as const,
    amount: Number(payout.amount),
    currency: payout.currency,
    status: payout.status,
    totals: { gross: Number(t.gross), fees: Number(t.fees), refunds: Number(t.refunds), disputes: Number(t.disputes), adjustments: Number(t.adjustments), net: Number(t.net) },
    item_count: payout.itemCount,
    order_count: payout.orderCount,
    destination: payout.destination,
    arrival_date: payout.arrivalDate,
    cutoff: isoOrNull(payout.cutoff),
    failure_code: payout.failureCode ?? null,
    livemode: payout.livemode,
    created: isoOrNull(payout.created),
  };
}

/** The columns of the CSV export, in order. */
export const CSV_COLUMNS = ['payout', 'item', 'type', 'order', 'refund', 'dispute', 'reference', 'currency', 'gross', 'percentage_fee', 'fixed_fee', 'other_fees', 'net', 'created'] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. Text a
 * spreadsheet would run as a formula (starting with = + - @, a tab or a carriage return) is
 * prefixed with an apostrophe: a merchant's reference is the customer's to influence.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One item as a CSV line (with its line break). */
export function csvLine(payoutId: string, item: PayoutItem): string {
  const fields = [
    payoutId,
    item.id,
    item.type,
    item.orderId ?? null,
    item.refundId ?? null,
    item.disputeId ?? null,
    item.reference ?? null,
    item.currency,
    Number(item.gross),
    Number(item.percentageFee),
    Number(item.fixedFee),
    Number(item.otherFees),
    Number(item.net),
    isoOrNull(item.created),
  ];
  return `${fields.map(csvField).join(',')}\r\n`;
}
