import { capturedAmount } from '../../order/domain/order-transitions.ts';
import type { DomainEvent, EventType, JsonValue } from '../../event/domain/domain-event.ts';
import { findCurrency } from '../../../kernel/domain/currency.ts';
import type { Money } from '../../../kernel/domain/money.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import { DomainError, invalid } from '../../../kernel/domain/domain-error.ts';
import { evidenceJson, evidenceText, type Evidence } from './evidence.ts';

/** Why a cardholder disputes a payment (Stripe's reasons). */
export const DISPUTE_REASONS = [
  'fraudulent',
  'product_not_received',
  'duplicate',
  'subscription_canceled',
  'product_unacceptable',
  'credit_not_processed',
  'unrecognized',
  'general',
] as const;
export type DisputeReason = (typeof DISPUTE_REASONS)[number];

/**
 * Stripe's statuses of a chargeback: needs_response (the merchant may answer until evidence_due_by),
 * under_review (answered, the network decides), then won or lost (final). Inquiries (Stripe's
 * warning_* statuses) are not modelled: every dispute here is a chargeback that moves money.
 */
export type DisputeStatus = 'needs_response' | 'under_review' | 'won' | 'lost';

/** The statuses in which a dispute still holds its amount in the dispute reserve. */
export const OPEN_DISPUTE_STATUSES: readonly DisputeStatus[] = ['needs_response', 'under_review'];

/** Prefix of every dispute id. */
export const DISPUTE_ID_PREFIX = 'dp_';

/** The dispute fee, in major units of the merchant's settlement currency (Stripe charges 15.00 too). Not returned when the dispute is won. */
export const DISPUTE_FEE_MAJOR_UNITS = 15n;

/** How long the merchant has to answer a dispute when nothing else is said. */
export const EVIDENCE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/** What opened the dispute: the test helper, or the sandbox's dispute test card (one per order). */
export type DisputeSource = 'test_helper' | 'test_card';

/** Where the merchant's money for the order was when the dispute was opened. */
export type MerchantBalance = 'merchant_pending' | 'merchant_available';

/** A dispute (chargeback) of an order's payment. */
export interface Dispute {
  readonly id: string;
  readonly orderId: string;
  readonly paymentId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  /** The merchant's reference of the order. */
  readonly reference: string;
  /** Disputed, in the order's currency. */
  readonly amount: bigint;
  readonly currency: string;
  readonly reason: DisputeReason;
  readonly status: DisputeStatus;
  readonly evidenceDueBy: Date;
  /** The evidence as submitted; null until then. */
  readonly submittedEvidence: Evidence | null;
  readonly submissionCount: number;
  /** The amount withdrawn from the merchant into the dispute reserve, in the settlement currency. */
  readonly withdrawn: Money;
  /** The dispute fee, in the settlement currency. */
  readonly fee: Money;
  /** The balance it was withdrawn from. */
  readonly withdrawnFrom: MerchantBalance;
  readonly source: DisputeSource;
  /** Incremented with each event; the sequence number of its latest event. */
  readonly version: number;
  readonly createdAt: Date;
  readonly closedAt: Date | null;
}

/** What opens a dispute. */
export interface DisputeCommand {
  readonly reason: string;
  /** The remaining amount when absent. */
  readonly amount: bigint | undefined;
  /** EVIDENCE_WINDOW_MS ahead when absent. */
  readonly evidenceDueBy: Date | undefined;
}

/** What the order already holds, under its row lock. */
export interface OrderHolds {
  /** The captured payment's id, when the order has one. */
  readonly paymentId: string | undefined;
  /** Reserved by refunds still pending. */
  readonly refundPending: bigint;
  /** Held by disputes open or lost. */
  readonly disputed: bigint;
}

/** The dispute fee in a settlement currency: DISPUTE_FEE_MAJOR_UNITS at the currency's exponent. */
export function disputeFee(settlementCurrency: string): Money {
  const exponent = findCurrency(settlementCurrency)?.exponent ?? 2;
  return { currency: settlementCurrency, amount: DISPUTE_FEE_MAJOR_UNITS * 10n ** BigInt(exponent) };
}

/** The events and the dispute after a change. */
export interface DisputeChange {
  readonly dispute: Dispute;
  readonly events: readonly DomainEvent[];
}

type EventIds = () => { eventId: string; now: Date };

/**
 * Decides a dispute of `order` against what its captures less refunds and other disputes leave:
 * the dispute, needs_response. Refunds and disputes together never exceed what was captured.
 * @throws DomainError dispute.order_not_disputable, dispute.reason_invalid, dispute.amount_invalid
 *   or dispute.exceeds_remaining
 */
export function planDispute(
  order: Order,
  holds: OrderHolds,
  command: DisputeCommand,
  facts: { id: string; now: Date; settlementCurrency: string; withdrawn: (amount: Money) => Money; source: DisputeSource },
): Dispute {
  if (!(order.status === 'paid' || order.status === 'partially_refunded') || holds.paymentId === undefined) {
    throw new DomainError('dispute.order_not_disputable', `Order ${order.id} is ${order.status}: only a paid order with money left on it can be disputed.`);
  }
  if (order.method === 'bank_transfer') {
    throw new DomainError('dispute.order_not_disputable', `Order ${order.id} was paid by bank transfer, which has no chargebacks: only card and wallet payments can be disputed.`);
  }
  if (!(DISPUTE_REASONS as readonly string[]).includes(command.reason)) {
    throw invalid('dispute.reason_invalid', 'reason', `reason must be one of ${DISPUTE_REASONS.join(', ')}.`);
  }
  if (command.amount !== undefined && command.amount <= 0n) {
    throw invalid('dispute.amount_invalid', 'amount', `amount must be a positive integer in minor units of ${order.currency} (got ${command.amount}).`);
  }
  // Bounded by what was captured: a partial manual capture leaves less than the order's amount.
  const remaining = capturedAmount(order) - order.amountRefunded - holds.refundPending - holds.disputed;
  const amount = command.amount ?? remaining;
  if (amount > remaining || amount <= 0n) {
    throw invalid(
      'dispute.exceeds_remaining',
      'amount',
      `Only ${remaining > 0n ? remaining : 0n} (minor units of ${order.currency}) of order ${order.id} can be disputed: ${order.amountRefunded} refunded, ${holds.refundPending} in pending refunds, ${holds.disputed} in other disputes.`,
    );
  }
  return {
    id: facts.id,
    orderId: order.id,
    paymentId: holds.paymentId,
    merchantId: order.merchantId,
    livemode: order.livemode,
    reference: order.reference,
    amount,
    currency: order.currency,
    reason: command.reason as DisputeReason,
    status: 'needs_response',
    evidenceDueBy: command.evidenceDueBy ?? new Date(facts.now.getTime() + EVIDENCE_WINDOW_MS),
    submittedEvidence: null,
    submissionCount: 0,
    withdrawn: facts.withdrawn({ amount, currency: order.currency }),
    fee: disputeFee(facts.settlementCurrency),
    withdrawnFrom: order.settledAt ? 'merchant_available' : 'merchant_pending',
    source: facts.source,
    version: 0,
    createdAt: facts.now,
    closedAt: null,
  };
}

/** The dispute as its events show it. */
export function disputeEventData(dispute: Dispute): { [key: string]: JsonValue } {
  return {
    id: dispute.id,
    amount: Number(dispute.amount),
    currency: dispute.currency,
    reason: dispute.reason,
    status: dispute.status,
    evidence_due_by: dispute.evidenceDueBy.toISOString(),
  };
}

function event(dispute: Dispute, type: EventType, data: { [key: string]: JsonValue }, ids: { eventId: string; now: Date }, sequence: number): DomainEvent {
  return {
    id: ids.eventId,
    type,
    merchantId: dispute.merchantId,
    livemode: dispute.livemode,
    subject: { type: 'dispute', id: dispute.id },
    orderId: dispute.orderId,
    reference: dispute.reference,
    sequence,
    createdAt: ids.now,
    data,
  };
}

/** Appends events to a dispute, each numbered by the dispute's next version. */
function withEvents(dispute: Dispute, made: ReadonlyArray<{ type: EventType; data: { [key: string]: JsonValue } }>, eventIds: EventIds): DisputeChange {
  const events = made.map((e, i) => event(dispute, e.type, e.data, eventIds(), dispute.version + i + 1));
  return { dispute: { ...dispute, version: dispute.version + made.length }, events };
}

function fundsData(dispute: Dispute, withFee: boolean): { [key: string]: JsonValue } {
  return {
    order_id: dispute.orderId,
    reference: dispute.reference,
    dispute: disputeEventData(dispute),
    funds: {
      amount: Number(dispute.withdrawn.amount),
      currency: dispute.withdrawn.currency,
      ...(withFee ? { fee: Number(dispute.fee.amount), fee_currency: dispute.fee.currency } : {}),
    },
  };
}

/**
 * The events of an opened dispute: order.disputed (the dispute, the order and the evidence already
 * attached to it), then dispute.funds_withdrawn (the amount and the fee taken from the balance).
 */
export function openDispute(dispute: Dispute, order: Pick<Order, 'amount' | 'currency'>, evidence: Evidence, eventIds: EventIds): DisputeChange {
  return withEvents(
    dispute,
    [
      {
        type: 'order.disputed',
        data: { id: dispute.orderId, reference: dispute.reference, amount: Number(order.amount), currency: order.currency, dispute: disputeEventData(dispute), evidence: evidenceJson(evidence) },
      },
      { type: 'dispute.funds_withdrawn', data: fundsData(dispute, true) },
    ],
    eventIds,
  );
}

/**
 * needs_response → under_review with the evidence as submitted; dispute.updated tells of it.
 * @throws DomainError dispute.not_submittable (closed or already submitted) or dispute.evidence_past_due
 */
export function submitDispute(dispute: Dispute, evidence: Evidence, now: Date, eventIds: EventIds): DisputeChange {
  if (dispute.status !== 'needs_response') {
    throw new DomainError('dispute.not_submittable', `Dispute ${dispute.id} is ${dispute.status}: only a dispute that needs a response can be submitted.`);
  }
  if (now > dispute.evidenceDueBy) {
    throw new DomainError('dispute.evidence_past_due', `The evidence of dispute ${dispute.id} was due by ${dispute.evidenceDueBy.toISOString()}; it is lost once the sweeper closes it.`);
  }
  const submitted: Dispute = { ...dispute, status: 'under_review', submittedEvidence: evidence, submissionCount: dispute.submissionCount + 1 };
  return withEvents(submitted, [{ type: 'dispute.updated', data: { order_id: dispute.orderId, reference: dispute.reference, dispute: disputeEventData(submitted), evidence: evidenceJson(evidence) } }], eventIds);
}

/** How test mode decides a submitted dispute: `winning_evidence` wins, `losing_evidence` loses, else it stays under review. */
export function testOutcome(dispute: Dispute): 'won' | 'lost' | undefined {
  if (dispute.status !== 'under_review' || !dispute.submittedEvidence) return undefined;
  const text = evidenceText(dispute.submittedEvidence.merchant);
  if (text.includes('winning_evidence')) return 'won';
  if (text.includes('losing_evidence')) return 'lost';
  return undefined;
}

/** True when the dispute needs a response and its evidence is overdue: it is lost. */
export function isPastDue(dispute: Dispute, now: Date): boolean {
  return dispute.status === 'needs_response' && now > dispute.evidenceDueBy;
}

/**
 * An open dispute → won (dispute.funds_reinstated, then dispute.closed) or lost (dispute.closed).
 * @throws Error when the dispute is closed already: the caller locks it and checks first.
 */
export function closeDispute(dispute: Dispute, outcome: 'won' | 'lost', now: Date, eventIds: EventIds): DisputeChange {
  if (!OPEN_DISPUTE_STATUSES.includes(dispute.status)) throw new Error(`dispute ${dispute.id} is ${dispute.status} already`);
  const closed: Dispute = { ...dispute, status: outcome, closedAt: now };
  const made: { type: EventType; data: { [key: string]: JsonValue } }[] = [];
  if (outcome === 'won') made.push({ type: 'dispute.funds_reinstated', data: fundsData(closed, false) });
  made.push({ type: 'dispute.closed', data: { order_id: dispute.orderId, reference: dispute.reference, dispute: disputeEventData(closed), outcome } });
  return withEvents(closed, made, eventIds);
}
