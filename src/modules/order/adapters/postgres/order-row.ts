import type { CaptureMethod, Order, OrderStatus } from '../../domain/order.entity.ts';

/** The orders table's row, as read (bigints as strings) or as stored in JSON. */
export interface OrderRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  reference: string;
  amount: string;
  currency: string;
  status: string;
  line_items: { name: string; amount: string }[];
  return_url: string | null;
  checkout_url: string;
  method: string | null;
  settlement_currency: string | null;
  settlement_amount: string | null;
  /** Absent in snapshots stored before refunds existed, and in the creation statement (the column defaults to 0). */
  amount_refunded?: string;
  /** Absent in snapshots stored before manual capture existed (they were automatic). */
  capture_method?: string;
  amount_captured?: string | null;
  authorization_expires_at?: Date | string | null;
  settled_at?: Date | string | null;
  version: number;
  created_at: Date | string;
  updated_at: Date | string;
  expires_at: Date | string;
  checkout_token: string;
  /** Absent in snapshots stored before client secrets existed; null for orders without one. */
  client_secret_hash?: string | null;
  client_secret_expires_at?: Date | string | null;
  /** Absent in snapshots stored before payment links existed. */
  payment_link_id?: string | null;
  /** Absent in snapshots stored before customers existed. */
  customer_id?: string | null;
  /** Absent in snapshots stored before subscriptions existed. */
  subscription_id?: string | null;
  subscription_cycle?: number | null;
}

const STATUSES: ReadonlySet<string> = new Set<OrderStatus>(['pending', 'failed', 'authorized', 'paid', 'expired', 'partially_refunded', 'refunded', 'voided']);

/** Maps a domain order to its row. Line-item amounts are kept as strings so jsonb never holds a float. */
export function orderToRow(order: Order, updatedAt: Date = order.createdAt): OrderRow {
  return {
    id: order.id,
    merchant_id: order.merchantId,
    livemode: order.livemode,
    reference: order.reference,
    amount: order.amount.toString(),
    currency: order.currency,
    status: order.status,
    line_items: order.lineItems.map((item) => ({ name: item.name, amount: item.amount.toString() })),
    return_url: order.returnUrl,
    checkout_url: order.checkoutUrl,
    method: order.method,
    settlement_currency: order.settlement?.currency ?? null,
    settlement_amount: order.settlement?.amount.toString() ?? null,
    capture_method: order.captureMethod,
    amount_captured: order.amountCaptured?.toString() ?? null,
    authorization_expires_at: order.authorizationExpiresAt,
    version: order.version,
    created_at: order.createdAt,
    updated_at: updatedAt,
    expires_at: order.expiresAt,
    checkout_token: order.checkoutToken,
    client_secret_hash: order.clientSecretHash ?? null,
    client_secret_expires_at: order.clientSecretExpiresAt ?? null,
    payment_link_id: order.paymentLinkId ?? null,
    customer_id: order.customerId ?? null,
    subscription_id: order.subscriptionId ?? null,
    subscription_cycle: order.subscriptionCycle ?? null,
  };
}

/**
 * Maps a row (from a query or from a stored JSON snapshot) to a domain order.
 * @throws Error when the row holds a status this code does not know (a newer writer).
 */
export function rowToOrder(row: OrderRow): Order {
  if (!STATUSES.has(row.status)) throw new Error(`order ${row.id} has unknown status ${row.status}`);
  return {
    id: row.id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    reference: row.reference,
    amount: BigInt(row.amount),
    currency: row.currency,
    status: row.status as OrderStatus,
    lineItems: row.line_items.map((item) => ({ name: item.name, amount: BigInt(item.amount) })),
    returnUrl: row.return_url,
    checkoutUrl: row.checkout_url,
    method: row.method,
    settlement:
      row.settlement_currency !== null && row.settlement_amount !== null
        ? { currency: row.settlement_currency, amount: BigInt(row.settlement_amount) }
        : null,
    captureMethod: (row.capture_method ?? 'automatic') as CaptureMethod,
    amountCaptured: row.amount_captured === undefined || row.amount_captured === null ? null : BigInt(row.amount_captured),
    authorizationExpiresAt: row.authorization_expires_at ? new Date(row.authorization_expires_at) : null,
    amountRefunded: BigInt(row.amount_refunded ?? '0'),
    settledAt: row.settled_at ? new Date(row.settled_at) : null,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    checkoutToken: row.checkout_token,
    clientSecretHash: row.client_secret_hash ?? null,
    clientSecretExpiresAt: row.client_secret_expires_at ? new Date(row.client_secret_expires_at) : null,
    customerId: row.customer_id ?? null,
    version: row.version,
    paymentLinkId: row.payment_link_id ?? null,
    subscriptionId: row.subscription_id ?? null,
    subscriptionCycle: row.subscription_cycle ?? null,
  };
}
