import type { Order } from '../../order/domain/order.entity.ts';
import { capturedAmount } from '../../order/domain/order-transitions.ts';
import { DomainError, invalid } from '../../../kernel/domain/domain-error.ts';

/** Why a merchant refunds (Stripe's reasons, plus other). */
export const REFUND_REASONS = ['requested_by_customer', 'duplicate', 'fraudulent', 'product_not_received', 'other'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/** pending while the acquirer works on it; then succeeded or failed (canceled is for refunds withdrawn before the acquirer took them). */
export type RefundStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

/** Prefix of every refund id. */
export const REFUND_ID_PREFIX = 're_';

/** A refund of all or part of an order's capture. */
export interface Refund {
  readonly id: string;
  readonly orderId: string;
  readonly paymentId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  /** The merchant's reference of the order. */
  readonly reference: string;
  readonly amount: bigint;
  readonly currency: string;
  readonly reason: RefundReason;
  readonly note: string;
  readonly status: RefundStatus;
  /** The acquirer's reference, once it answered. */
  readonly processorRef: string | null;
  /** Why the acquirer refused it, when failed. */
  readonly failureCode: string | null;
  readonly createdAt: Date;
}

/** What a merchant asks for: an amount (the whole remainder when absent), a reason, a note. */
export interface RefundCommand {
  readonly amount: bigint | undefined;
  readonly reason: string;
  readonly note: string;
}

/** The most a note may hold. */
export const NOTE_MAX_LENGTH = 500;

/**
 * Decides a refund of `order`, whose captured payment is `paymentId`, against what is already
 * refunded or reserved by pending refunds (`inFlight`) and held by open or lost disputes
 * (`disputed`): the refund to reserve, status pending. Refunds and disputes together never exceed
 * what was captured.
 * @throws DomainError refund.order_not_refundable, refund.reason_invalid, refund.note_invalid,
 *   refund.amount_invalid or refund.exceeds_remaining
 */
export function planRefund(order: Order, paymentId: string | undefined, inFlight: bigint, command: RefundCommand, ids: { id: string; now: Date }, disputed = 0n): Refund {
  if (!(order.status === 'paid' || order.status === 'partially_refunded' || order.status === 'refunded') || paymentId === undefined) {
    throw new DomainError('refund.order_not_refundable', `Order ${order.id} is ${order.status}${paymentId === undefined && order.status === 'paid' ? ' and its payment is being voided' : ''}: only a paid order can be refunded.`);
  }
  if (!(REFUND_REASONS as readonly string[]).includes(command.reason)) {
    throw invalid('refund.reason_invalid', 'reason', `reason must be one of ${REFUND_REASONS.join(', ')}.`);
  }
  if (!command.note.isWellFormed() || command.note.includes('\u0000')) throw invalid('refund.note_invalid', 'note', 'note must be valid Unicode text without NUL characters.');
  if ([...command.note].length > NOTE_MAX_LENGTH) throw invalid('refund.note_invalid', 'note', `note holds at most ${NOTE_MAX_LENGTH} characters.`);
  // Bounded by what was captured: a partial manual capture leaves less than the order's amount.
  const remaining = capturedAmount(order) - order.amountRefunded - inFlight - disputed;
  const amount = command.amount ?? remaining;
  if (command.amount !== undefined && command.amount <= 0n) {
    throw invalid('refund.amount_invalid', 'amount', `amount must be a positive integer in minor units of ${order.currency} (got ${command.amount}).`);
  }
  if (amount > remaining || amount <= 0n) {
    throw invalid(
      'refund.exceeds_remaining',
      'amount',
      `Only ${remaining > 0n ? remaining : 0n} (minor units of ${order.currency}) of order ${order.id} remain to refund; ${order.amountRefunded} refunded, ${inFlight} in refunds still pending${disputed > 0n ? `, ${disputed} held by disputes` : ''}.`,
    );
  }
  return {
    id: ids.id,
    orderId: order.id,
    paymentId,
    merchantId: order.merchantId,
    livemode: order.livemode,
    reference: order.reference,
    amount,
    currency: order.currency,
    reason: command.reason as RefundReason,
    note: command.note,
    status: 'pending',
    processorRef: null,
    failureCode: null,
    createdAt: ids.now,
  };
}
