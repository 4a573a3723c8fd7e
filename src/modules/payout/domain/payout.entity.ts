import type { DomainEvent, EventType, JsonValue } from '../../event/domain/domain-event.ts';

// Payouts (settlement batches): a merchant's available money in one mode and currency, sent to the
// merchant's bank account with the items that brought it in. docs/money.md tells the whole story.

/** Prefix of every payout id. */
export const PAYOUT_ID_PREFIX = 'po_';

/**
 * pending: made by a run, its money taken from the available balance; in_transit: left for the
 * bank (payout.settled); paid: arrived (payout.paid); failed: the bank refused it and the money
 * returned to the available balance (payout.failed). paid and failed are final.
 */
export type PayoutStatus = 'pending' | 'in_transit' | 'paid' | 'failed';

/** What a payout item pays out, after the ledger transaction behind it. */
export type PayoutItemType = 'charge' | 'refund' | 'dispute' | 'dispute_reversal' | 'payout_failure' | 'adjustment';

/** The parts of a payout's amount, in minor units of its currency: amount = gross - fees + refunds + disputes + adjustments. */
export interface PayoutTotals {
  /** What the charges brought in before fees (positive). */
  readonly gross: bigint;
  /** Every fee the items carry (positive: taken from the merchant). */
  readonly fees: bigint;
  /** Refunds paid from the merchant's balance (negative or zero). */
  readonly refunds: bigint;
  /** Disputed money withdrawn, less what was reinstated (negative, zero or positive). */
  readonly disputes: bigint;
  /** Anything else: a failed payout's money coming back, say. */
  readonly adjustments: bigint;
}

/** A settlement batch. */
export interface Payout {
  readonly id: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly currency: string;
  /** The net paid out (positive: a balance of zero or less makes no payout). */
  readonly amount: bigint;
  readonly totals: PayoutTotals;
  readonly itemCount: number;
  /** How many distinct orders its items belong to. */
  readonly orderCount: number;
  readonly status: PayoutStatus;
  /** The bank account, masked: country, check digits and the last four characters of the IBAN. */
  readonly destination: string;
  /** The day (UTC, YYYY-MM-DD) the money is expected at the bank. */
  readonly arrivalDate: string;
  /** The run's cut-off: the payout holds what was settled until then. */
  readonly cutoff: Date;
  /** Why the bank refused it, when failed. */
  readonly failureCode: string | null;
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One line of a payout: a ledger transaction that moved the merchant's money, itemised. */
export interface PayoutItem {
  /** Its line in the payout (1, 2, …): its id there, and the cursor of its pages. */
  readonly id: string;
  readonly payoutId: string;
  readonly transactionId: string;
  readonly type: PayoutItemType;
  readonly orderId: string | null;
  readonly refundId: string | null;
  readonly disputeId: string | null;
  /** The merchant's reference of the order behind the item. */
  readonly reference: string | null;
  readonly currency: string;
  /** Before fees: a charge's captured amount, a refund's amount (negative), … */
  readonly gross: bigint;
  readonly percentageFee: bigint;
  readonly fixedFee: bigint;
  /** Fees of any other kind (a dispute fee). */
  readonly otherFees: bigint;
  /** gross less every fee: what the item adds to the payout. */
  readonly net: bigint;
  readonly createdAt: Date;
}

/** An order behind a payout, as payout.settled names it. */
export interface PayoutOrder {
  readonly id: string;
  readonly reference: string;
}

/** The test IBAN every sandbox's test-mode payouts go to (a valid German test IBAN; no bank sees it). */
export const SANDBOX_PAYOUT_IBAN = 'DE89370400440532013000';

/** Days from leaving to arriving at the merchant's bank (one business day, counted as one day). */
export const PAYOUT_TRANSIT_DAYS = 1;

/** The most orders payout.settled names; a larger batch says how many there are and where to page them. */
export const PAYOUT_EVENT_ORDER_LIMIT = 500;

/** Why the simulated bank refuses a payout, when a test run asks it to (Stripe's code for it). */
export const SIMULATED_FAILURE_CODE = 'account_closed';

/** An IBAN as a payout shows it: country and check digits, then the last four characters ("DE89 •••• 3000"). */
export function maskIban(iban: string): string {
  const compact = iban.replace(/\s+/g, '').toUpperCase();
  return `${compact.slice(0, 4)} •••• ${compact.slice(-4)}`;
}

/**
 * The latest daily cut-off at or before `now`, the cut-off being `minutesUtc` minutes after
 * midnight UTC (0 to 1439).
 */
export function latestCutoff(now: Date, minutesUtc: number): Date {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const today = midnight + minutesUtc * 60_000;
  return new Date(today <= now.getTime() ? today : today - 86_400_000);
}

/** The day (YYYY-MM-DD, UTC) `days` after `from`. */
export function dayAfter(from: Date, days: number): string {
  return new Date(from.getTime() + days * 86_400_000).toISOString().slice(0, 10);
}

/** The result of a payout's state change: the payout at its next version and the event telling of it. */
export interface PayoutTransition {
  readonly payout: Payout;
  readonly event: DomainEvent;
}

const ALLOWED: { readonly [From in PayoutStatus]: readonly PayoutStatus[] } = {
  pending: ['in_transit'],
  in_transit: ['paid', 'failed'],
  paid: [],
  failed: [],
};

/** The public shape of a payout inside event data (snake_case, amounts as JSON integers). */
export function payoutEventData(payout: Payout): { [key: string]: JsonValue } {
  const t = payout.totals;
  return {
    id: payout.id,
    amount: Number(payout.amount),
    currency: payout.currency,
    status: payout.status,
    arrival_date: payout.arrivalDate,
    destination: payout.destination,
    totals: { gross: Number(t.gross), fees: Number(t.fees), refunds: Number(t.refunds), disputes: Number(t.disputes), adjustments: Number(t.adjustments), net: Number(payout.amount) },
    item_count: payout.itemCount,
    order_count: payout.orderCount,
    failure_code: payout.failureCode,
    livemode: payout.livemode,
    created: payout.createdAt.toISOString(),
  };
}

function payoutTransition(payout: Payout, to: PayoutStatus, changes: Partial<Payout>, type: EventType, extra: { [key: string]: JsonValue }, ids: { eventId: string; now: Date }): PayoutTransition {
  if (!ALLOWED[payout.status].includes(to)) throw new Error(`illegal payout transition ${payout.status} -> ${to} for ${payout.id}`);
  const next: Payout = { ...payout, ...changes, status: to, version: payout.version + 1, updatedAt: ids.now };
  return {
    payout: next,
    event: {
      id: ids.eventId,
      type,
      merchantId: next.merchantId,
      livemode: next.livemode,
      subject: { type: 'payout', id: next.id },
      orderId: null,
      reference: null,
      sequence: next.version,
      createdAt: ids.now,
      data: { ...payoutEventData(next), ...extra },
    },
  };
}

/**
 * pending → in_transit: the payout leaves for the merchant's bank. payout.settled names the orders
 * behind it with their references (the first PAYOUT_EVENT_ORDER_LIMIT; `orders_truncated` says when
 * there are more, which GET /v1/payouts/:id/items pages through).
 */
export function sendPayout(payout: Payout, orders: readonly PayoutOrder[], ids: { eventId: string; now: Date }): PayoutTransition {
  const named = orders.slice(0, PAYOUT_EVENT_ORDER_LIMIT);
  return payoutTransition(
    payout,
    'in_transit',
    {},
    'payout.settled',
    {
      orders: named.map((o) => ({ id: o.id, reference: o.reference })),
      orders_truncated: payout.orderCount > named.length,
      items_url: `/v1/payouts/${payout.id}/items`,
    },
    ids,
  );
}

/** in_transit → paid: the money arrived (payout.paid). */
export function arrivePayout(payout: Payout, ids: { eventId: string; now: Date }): PayoutTransition {
  return payoutTransition(payout, 'paid', {}, 'payout.paid', {}, ids);
}

/** in_transit → failed: the bank refused it, the money returns to the available balance (payout.failed). */
export function failPayout(payout: Payout, failureCode: string, ids: { eventId: string; now: Date }): PayoutTransition {
  return payoutTransition(payout, 'failed', { failureCode }, 'payout.failed', {}, ids);
}
