import { invalid } from '../../../kernel/domain/domain-error.ts';
import { validateCreateOrder } from '../../order/domain/create-order.ts';
import type { LineItem } from '../../order/domain/order.entity.ts';
import { PAYMENT_LINK_ID_PREFIX, paymentLinkUrl, type PaymentLink, type PaymentLinkType } from './payment-link.entity.ts';

/** What a merchant asks for when creating a payment link, before validation. */
export interface CreatePaymentLinkCommand {
  readonly amount: bigint;
  readonly currency: string;
  readonly reference: string;
  readonly lineItems: readonly LineItem[];
  readonly returnUrl: string | undefined;
  /** undefined: the link never expires. */
  readonly expiresAt: Date | undefined;
  /** undefined when the caller named none (refused). */
  readonly type: PaymentLinkType | undefined;
}

/** Shortest and longest lifetimes a merchant may give a link (merchants complain of links that expire too soon). */
export const MIN_LINK_EXPIRY_MS = 5 * 60_000;
export const MAX_LINK_EXPIRY_MS = 366 * 24 * 3600_000;

/**
 * Validates a create command with the order's own rules (amount against the currency,
 * reference, line items and their sum, return_url), then the link's: a type, and an expiry from
 * 5 minutes to 366 days ahead.
 * @throws DomainError as order creation does, and request.parameter_missing (type) or order.expires_at_invalid.
 */
export function validateCreatePaymentLink(command: CreatePaymentLinkCommand, now: Date): CreatePaymentLinkCommand & { readonly type: PaymentLinkType } {
  const order = validateCreateOrder({ ...command, expiresAt: undefined }, now);
  if (command.type === undefined) throw invalid('request.parameter_missing', 'type', 'type is required: "single_use" (one payment) or "collecting" (any number).');
  if (command.expiresAt !== undefined) {
    const ahead = command.expiresAt.getTime() - now.getTime();
    if (!(ahead >= MIN_LINK_EXPIRY_MS && ahead <= MAX_LINK_EXPIRY_MS)) {
      throw invalid('order.expires_at_invalid', 'expires_at', 'A payment link\'s expires_at must be between 5 minutes and 366 days from now; leave it out for a link that never expires.');
    }
  }
  return { amount: order.amount, currency: order.currency, reference: order.reference, lineItems: order.lineItems, returnUrl: order.returnUrl, expiresAt: command.expiresAt, type: command.type };
}

/** Facts decided outside the domain: identity, time, owner and where the link lives. */
export interface CreatePaymentLinkContext {
  readonly id: string;
  /** Unguessable: whoever holds it can pay. */
  readonly suffix: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly checkoutHost: string;
  readonly now: Date;
}

/** Creates an active link from a validated command. */
export function createPaymentLink(command: ReturnType<typeof validateCreatePaymentLink>, ctx: CreatePaymentLinkContext): PaymentLink {
  if (!ctx.id.startsWith(PAYMENT_LINK_ID_PREFIX)) throw new Error(`payment link id ${ctx.id} lacks ${PAYMENT_LINK_ID_PREFIX}`);
  return {
    id: ctx.id,
    merchantId: ctx.merchantId,
    livemode: ctx.livemode,
    suffix: ctx.suffix,
    url: paymentLinkUrl(ctx.checkoutHost, ctx.suffix),
    type: command.type,
    amount: command.amount,
    currency: command.currency,
    reference: command.reference,
    lineItems: command.lineItems,
    returnUrl: command.returnUrl ?? null,
    expiresAt: command.expiresAt ?? null,
    deactivatedAt: null,
    completedPayments: 0,
    createdAt: ctx.now,
    version: 1,
  };
}
