import { DomainError, invalid } from '../../../kernel/domain/domain-error.ts';
import { parseText } from '../../../kernel/domain/text.ts';
import { parseCurrency, parseNonNegativeAmount, parsePositiveAmount } from '../../../kernel/domain/money.ts';
import type { DomainEvent } from '../../event/domain/domain-event.ts';
import { orderEvent, orderEventData } from '../../event/domain/domain-event.ts';
import { checkoutUrlFor, clientSecretExpiry, type CaptureMethod, type LineItem, type Order } from './order.entity.ts';

/** Most line items one order may carry. */
export const MAX_LINE_ITEMS = 100;
/** Longest return_url accepted, in characters. */
export const MAX_URL_LENGTH = 2048;

/** What a merchant asks for when creating an order, before validation. */
export interface CreateOrderCommand {
  readonly amount: bigint;
  readonly currency: string;
  readonly reference: string;
  readonly lineItems: readonly LineItem[];
  readonly returnUrl: string | undefined;
  /** When the checkout closes; DEFAULT_EXPIRY_MS from now when undefined. */
  readonly expiresAt: Date | undefined;
  /** automatic when undefined. */
  readonly captureMethod?: CaptureMethod | undefined;
  /** The customer (cus_…) the order names; checked to be the merchant's by the use case. */
  readonly customerId?: string | undefined;
}

/** Facts decided outside the domain: identity, time, who asks and where the page lives. */
export interface CreateOrderContext {
  readonly orderId: string;
  readonly eventId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly checkoutHost: string;
  readonly checkoutToken: string;
  readonly now: Date;
  /** SHA-256 of the order's client secret, when the merchant's server creates it (the secret itself never reaches the domain). */
  readonly clientSecretHash?: string;
  /** The payment link the order is created for, when a customer opened one. */
  readonly paymentLinkId?: string;
  /** The subscription cycle the order charges, when a subscription made it. */
  readonly subscription?: { readonly id: string; readonly cycle: number };
}

/** How long an order can be paid when the merchant does not say: 24 hours. */
export const DEFAULT_EXPIRY_MS = 24 * 3600_000;
/** Shortest and longest checkout windows a merchant may ask for. */
export const MIN_EXPIRY_MS = 5 * 60_000;
export const MAX_EXPIRY_MS = 30 * 24 * 3600_000;

/**
 * Validates a create command into a canonical command. Separated from
 * {@link createOrder} so the idempotency fingerprint is taken of valid input.
 * @throws DomainError when any rule of the order is broken; nothing is created.
 */
export function validateCreateOrder(command: CreateOrderCommand, now: Date): CreateOrderCommand {
  if (command.currency === '') throw invalid('request.parameter_missing', 'currency', 'currency is required, e.g. "EUR".');
  const currency = parseCurrency(command.currency);
  const amount = parsePositiveAmount(command.amount, currency);
  const reference = parseText(command.reference, 'reference', 'order.reference_invalid');
  if (command.lineItems.length > MAX_LINE_ITEMS) {
    throw invalid('order.line_items_invalid', 'line_items', `line_items may hold at most ${MAX_LINE_ITEMS} items.`);
  }
  const lineItems = command.lineItems.map((item, i) => ({
    name: parseText(item.name, `line_items[${i}][name]`, 'order.line_items_invalid'),
    amount: parseNonNegativeAmount(item.amount, currency, `line_items[${i}][amount]`),
  }));
  if (lineItems.length > 0) {
    const sum = lineItems.reduce((total, item) => total + item.amount, 0n);
    if (sum !== amount) {
      throw new DomainError(
        'order.line_items_sum_mismatch',
        `line_items add up to ${sum} but amount is ${amount}; the line item amounts must sum to the order amount.`,
        'line_items',
      );
    }
  }
  const returnUrl = command.returnUrl === undefined ? undefined : parseReturnUrl(command.returnUrl);
  if (command.expiresAt !== undefined) {
    const ahead = command.expiresAt.getTime() - now.getTime();
    if (!(ahead >= MIN_EXPIRY_MS && ahead <= MAX_EXPIRY_MS)) {
      throw invalid('order.expires_at_invalid', 'expires_at', 'expires_at must be between 5 minutes and 30 days from now.');
    }
  }
  return { amount, currency: currency.code, reference, lineItems, returnUrl, expiresAt: command.expiresAt, ...(command.captureMethod ? { captureMethod: command.captureMethod } : {}), ...(command.customerId ? { customerId: command.customerId } : {}) };
}

function parseReturnUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = value.length <= MAX_URL_LENGTH ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
    throw invalid('order.return_url_invalid', 'return_url', `return_url must be an absolute http or https URL of at most ${MAX_URL_LENGTH} characters.`);
  }
  return value;
}

/**
 * Creates a pending order and its order.created event from a validated command.
 */
export function createOrder(command: CreateOrderCommand, ctx: CreateOrderContext): { order: Order; event: DomainEvent } {
  const expiresAt = command.expiresAt ?? new Date(ctx.now.getTime() + DEFAULT_EXPIRY_MS);
  const order: Order = {
    id: ctx.orderId,
    merchantId: ctx.merchantId,
    livemode: ctx.livemode,
    reference: command.reference,
    amount: command.amount,
    currency: command.currency,
    status: 'pending',
    lineItems: command.lineItems,
    returnUrl: command.returnUrl ?? null,
    checkoutUrl: checkoutUrlFor(ctx.checkoutHost, ctx.orderId),
    method: null,
    settlement: null,
    captureMethod: command.captureMethod ?? 'automatic',
    amountCaptured: null,
    authorizationExpiresAt: null,
    amountRefunded: 0n,
    settledAt: null,
    createdAt: ctx.now,
    expiresAt,
    checkoutToken: ctx.checkoutToken,
    ...(ctx.clientSecretHash ? { clientSecretHash: ctx.clientSecretHash, clientSecretExpiresAt: clientSecretExpiry(ctx.now, expiresAt) } : {}),
    customerId: command.customerId ?? null,
    version: 1,
    ...(ctx.paymentLinkId ? { paymentLinkId: ctx.paymentLinkId } : {}),
    ...(ctx.subscription ? { subscriptionId: ctx.subscription.id, subscriptionCycle: ctx.subscription.cycle } : {}),
  };
  const event: DomainEvent = orderEvent(order, 'order.created', orderEventData(order), { eventId: ctx.eventId, now: ctx.now });
  return { order, event };
}
