// The JSON shapes of the /v1 REST API as the server SDK sends and receives them: snake_case,
// amounts as integers in minor units of their currency, times as ISO 8601 strings. Written by hand
// from the OpenAPI document (GET /v1/openapi.json); keep them in step with it.

/** Options of one call: override the client's defaults for this request only. */
export interface RequestOptions {
  /** Sent as Idempotency-Key on POST, PATCH and DELETE; generated (a UUID) when omitted, and reused on every retry. */
  idempotencyKey?: string;
  /** Milliseconds before one attempt is abandoned (and retried, if attempts remain). */
  timeout?: number;
  /** Retries after the first attempt, for failures that are safe to retry. */
  maxRetries?: number;
}

/** A page of a list: `{object: 'list', url, has_more, data}`. */
export interface ListJson<T> {
  object: 'list';
  url: string;
  has_more: boolean;
  data: T[];
}

/** The paging parameters every list takes. */
export interface ListParams {
  /** 1 to 100 (1 to 1000 for payout items); 10 when omitted (100 for payout items). */
  limit?: number;
  /** The id of the last object of the previous page. */
  starting_after?: string;
}

/** What a DELETE answers. */
export interface DeletedJson<O extends string> {
  id: string;
  object: O;
  deleted: true;
}

export interface LineItem {
  name: string;
  amount: number;
}

// ---------------------------------------------------------------- orders and refunds

export interface PaymentAttempt {
  id: string;
  method: 'card' | 'wallet' | 'bank_transfer';
  route: string;
  status: 'processing' | 'requires_authentication' | 'authorized' | 'succeeded' | 'failed' | 'canceled' | 'reversal_pending' | 'reversed';
  decline_code: string | null;
  authentication: 'not_required' | 'required' | 'passed' | 'failed' | 'abandoned';
  card_brand: string | null;
  card_last4: string | null;
  retry: boolean;
  card: string | null;
  created: string;
}

export type OrderStatus = 'pending' | 'paid' | 'expired' | 'failed' | 'partially_refunded' | 'refunded' | 'voided' | 'authorized';

export interface Order {
  id: string;
  object: 'order';
  reference: string;
  amount: number;
  currency: string;
  status: OrderStatus;
  checkout_url: string;
  line_items: LineItem[];
  return_url: string | null;
  method: string | null;
  settlement: { currency: string; amount: number } | null;
  refunds: Refund[];
  amount_refunded: number;
  capture_method: 'automatic' | 'manual';
  amount_captured: number | null;
  authorization_expires_at: string | null;
  disputes: Dispute[];
  attempts: PaymentAttempt[];
  created: string;
  expires_at: string;
  livemode: boolean;
  payment_link: string | null;
  subscription: string | null;
  subscription_cycle: number | null;
  customer: string | null;
}

/**
 * An order as POST /v1/orders answers it: the order and its client secret, which an app (with the
 * publishable key) pays this one order with. Answered once: keep it with the order.
 */
export interface CreatedOrder extends Order {
  /** Absent on an idempotent replay of the create. */
  client_secret?: string;
}

export interface OrderCreateParams {
  /** Minor units of currency (2500 is 25.00 EUR). */
  amount: number;
  /** ISO 4217, uppercase. */
  currency: string;
  reference: string;
  line_items?: LineItem[];
  return_url?: string;
  /** ISO 8601, 5 minutes to 30 days ahead. */
  expires_at?: string;
  capture_method?: 'automatic' | 'manual';
  customer?: string;
  card?: string;
  confirm?: boolean;
}

export interface OrderListParams extends ListParams {
  reference?: string;
  payment_link?: string;
}

export interface OrderCaptureParams {
  amount?: number;
}

export type RefundReason = 'requested_by_customer' | 'duplicate' | 'fraudulent' | 'product_not_received' | 'other';

export interface Refund {
  id: string;
  object: 'refund';
  order: string;
  reference: string;
  amount: number;
  currency: string;
  reason: RefundReason;
  note: string | null;
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  failure_code: string | null;
  created: string | null;
}

export interface RefundCreateParams {
  /** Minor units; all that is not yet refunded when omitted. */
  amount?: number;
  reason: RefundReason;
  note?: string;
}

// ---------------------------------------------------------------- payouts

export interface Payout {
  id: string;
  object: 'payout';
  amount: number;
  currency: string;
  status: 'pending' | 'in_transit' | 'paid' | 'failed';
  totals: { gross: number; fees: number; refunds: number; disputes: number; adjustments: number; net: number };
  item_count: number;
  order_count: number;
  destination: string;
  arrival_date: string;
  cutoff: string | null;
  failure_code: string | null;
  livemode: boolean;
  created: string | null;
}

/** A payout as retrieve answers it: with the first page of its items. */
export interface PayoutWithItems extends Payout {
  items: ListJson<PayoutItem>;
}

export interface PayoutItem {
  /** The item's position in its payout: the cursor of starting_after. */
  id: string;
  object: 'payout_item';
  type: 'charge' | 'refund' | 'dispute' | 'dispute_reversal' | 'payout_failure' | 'adjustment';
  order: string | null;
  refund: string | null;
  dispute: string | null;
  reference: string | null;
  currency: string;
  gross: number;
  fees: { percentage: number; fixed: number; other: number; total: number };
  net: number;
  created: string | null;
}

export interface PayoutListParams extends ListParams {
  status?: Payout['status'];
}

// ---------------------------------------------------------------- disputes

export interface EvidenceParams {
  customer_email?: string;
  customer_name?: string;
  shipping_carrier?: string;
  tracking_number?: string;
  delivered_at?: string;
  product_description?: string;
  notes?: string;
}

export interface Evidence {
  object: 'evidence';
  order: string;
  customer_email: string | null;
  customer_name: string | null;
  shipping_carrier: string | null;
  tracking_number: string | null;
  delivered_at: string | null;
  product_description: string | null;
  notes: string | null;
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

export interface Dispute {
  id: string;
  object: 'dispute';
  order: string;
  reference: string;
  amount: number;
  currency: string;
  reason: string;
  status: 'needs_response' | 'under_review' | 'won' | 'lost';
  evidence_due_by: string | null;
  evidence: Evidence | null;
  submission_count: number;
  fee: number;
  fee_currency: string;
  livemode: boolean;
  created: string | null;
  closed: string | null;
}

export interface DisputeListParams extends ListParams {
  order?: string;
}

export interface DisputeSubmitParams {
  evidence?: EvidenceParams;
}

// ---------------------------------------------------------------- customers and cards

export interface Customer {
  id: string;
  object: 'customer';
  email: string | null;
  name: string | null;
  reference: string | null;
  metadata: Record<string, string>;
  livemode: boolean;
  test_clock: string | null;
  created: string;
}

export interface CustomerCreateParams {
  email?: string;
  name?: string;
  reference?: string;
  metadata?: Record<string, string>;
  /** Test mode only: the test clock (clock_…) the customer and its subscriptions run on. */
  test_clock?: string;
}

/** On update `""` clears a field, and metadata keys are merged (an empty value removes its key). */
export type CustomerUpdateParams = Omit<CustomerCreateParams, 'test_clock'>;

export interface CustomerListParams extends ListParams {
  email?: string;
}

export interface DeletedCustomer extends DeletedJson<'customer'> {
  cards_erased: number;
}

export interface SavedCard {
  id: string;
  object: 'card';
  customer: string;
  brand: 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown';
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  livemode: boolean;
  created: string;
}

/** A token (tok_…) made in the customer's browser, or raw card fields on a PCI-compliant server. */
export type CardCreateParams =
  | { token: string; card?: never }
  | { card: { number: string; exp_month: number; exp_year: number; cvc: string; name: string }; token?: never };

// ---------------------------------------------------------------- subscriptions

export interface Subscription {
  id: string;
  object: 'subscription';
  customer: string;
  card: string;
  amount: number;
  currency: string;
  reference: string;
  line_items: LineItem[];
  interval: 'day' | 'week' | 'month' | 'year';
  interval_count: number;
  start_date: string;
  trial_days: number;
  cycles: number | null;
  after_failed_retries: 'unpaid' | 'cancel';
  status: 'trialing' | 'active' | 'past_due' | 'unpaid' | 'paused' | 'canceled';
  next_cycle: number;
  next_charge_at: string | null;
  retries: number;
  cancel_at_period_end: boolean;
  canceled_at: string | null;
  cancellation_reason: 'requested' | 'cycles_completed' | 'payment_failed' | 'customer_deleted' | null;
  test_clock: string | null;
  livemode: boolean;
  created: string;
  charged_cycles: { cycle: number; order: string; charges: number }[];
}

export interface SubscriptionCreateParams {
  customer: string;
  card: string;
  amount: number;
  currency: string;
  reference: string;
  line_items?: LineItem[];
  interval: Subscription['interval'];
  interval_count?: number;
  start_date?: string;
  trial_days?: number;
  cycles?: number;
  after_failed_retries?: Subscription['after_failed_retries'];
}

export interface SubscriptionUpdateParams {
  card?: string;
}

export interface SubscriptionCancelParams {
  at_period_end?: boolean;
}

export interface SubscriptionListParams extends ListParams {
  customer?: string;
}

// ---------------------------------------------------------------- payment links

export interface PaymentLink {
  id: string;
  object: 'payment_link';
  url: string;
  type: 'single_use' | 'collecting';
  status: 'active' | 'deactivated' | 'expired' | 'completed';
  active: boolean;
  amount: number;
  currency: string;
  reference: string;
  line_items: LineItem[];
  return_url: string | null;
  expires_at: string | null;
  completed_payments: number;
  deactivated_at: string | null;
  created: string;
  livemode: boolean;
}

export interface PaymentLinkCreateParams {
  amount: number;
  currency: string;
  reference: string;
  type: PaymentLink['type'];
  line_items?: LineItem[];
  return_url?: string;
  expires_at?: string;
}

// ---------------------------------------------------------------- webhook endpoints and events

export interface WebhookEndpoint {
  id: string;
  object: 'webhook_endpoint';
  url: string | null;
  enabled_events: string[];
  description: string;
  status: 'enabled' | 'disabled';
  disabled_reason: 'by_merchant' | 'no_url' | 'failing' | null;
  is_default: boolean;
  livemode: boolean;
  created: string | null;
}

/** An endpoint as create and rotateSecret answer it: with its signing secret. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  secret: string;
  /** On rotateSecret: until when the old secret keeps signing too. */
  old_secret_expires_at?: string | null;
}

export interface WebhookEndpointCreateParams {
  url: string;
  enabled_events?: string[];
  description?: string;
}

export interface WebhookEndpointUpdateParams {
  url?: string;
  enabled_events?: string[];
  description?: string;
  disabled?: boolean;
}

export interface WebhookEndpointRotateSecretParams {
  /** How long the old secret keeps signing too, 1 to 604800 seconds; 86400 when omitted. */
  overlap_seconds?: number;
}


export interface Event {
  id: string;
  object: 'event';
  type: string;
  created: string | null;
  livemode: boolean;
  subject: { type: string; id: string };
  order_id: string | null;
  reference: string | null;
  sequence: number;
  data: Record<string, unknown>;
}

export interface EventListParams extends ListParams {
  type?: string;
  order_id?: string;
  reference?: string;
}

// ---------------------------------------------------------------- errors

/** The body of every error answer. */
export interface ErrorBody {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    request_id?: string;
  };
}
