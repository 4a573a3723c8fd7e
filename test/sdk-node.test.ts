// The server SDK against the real service on a loopback port: resources, paging, errors, and
// retries that reuse one Idempotency-Key through a connection cut after the server committed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  Checkout,
  IdempotencyError,
  InvalidRequestError,
  type CheckoutConfig,
  type Customer,
  type CustomerCreateParams,
  type CustomerListParams,
  type CustomerUpdateParams,
  type Dispute,
  type DisputeListParams,
  type DisputeSubmitParams,
  type Event,
  type EventListParams,
  type Evidence,
  type ListParams,
  type Order,
  type OrderCaptureParams,
  type OrderCreateParams,
  type OrderListParams,
  type PaymentAttempt,
  type PaymentLink,
  type PaymentLinkCreateParams,
  type Payout,
  type PayoutItem,
  type PayoutListParams,
  type Refund,
  type RefundCreateParams,
  type SavedCard,
  type Subscription,
  type SubscriptionCancelParams,
  type SubscriptionCreateParams,
  type SubscriptionListParams,
  type SubscriptionUpdateParams,
  type WebhookEndpoint,
  type WebhookEndpointCreateParams,
  type WebhookEndpointRotateSecretParams,
  type WebhookEndpointUpdateParams,
  type WebhookEndpointWithSecret,
} from '../sdk/index.ts';
import { CuttingProxy } from './support/cutting-proxy.ts';
import { api, payOrder, startHarness, type Harness } from './support/webhooks.ts';
import { requires } from './support/requirements.ts';

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness();
  key = h.sandbox.test_secret_key;
});

afterAll(async () => {
  await h?.close();
});

/** A client, and the request lines its fetch sent. */
function client(baseUrl = h.base, config: Partial<CheckoutConfig> = {}, secretKey = key) {
  const sent: string[] = [];
  const checkout = new Checkout(secretKey, {
    baseUrl,
    random: () => 0.1,
    fetch: (input, init) => {
      sent.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}${new URL(String(input)).search}`);
      return fetch(input, init);
    },
    ...config,
  });
  return { checkout, sent };
}

const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
const orderParams = (reference: string) => ({ amount: 2500, currency: 'EUR', reference, line_items: [{ name: 'Green tea', amount: 1500 }, { name: 'Teapot', amount: 1000 }] });
const cardOf = (behaviour: string) => h.sandbox.test_cards.find((c) => c.behaviour === behaviour)!.number;
const rawCard = (number: string) => ({ number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '123', name: 'Ada Lovelace' });

/** Orders with this reference, as the API lists them (not through the SDK). */
async function ordersWithReference(reference: string): Promise<Order[]> {
  const res = await api<{ data: Order[] }>(h.base, key, 'GET', `/v1/orders?reference=${encodeURIComponent(reference)}&limit=100`);
  return res.json.data;
}

describe('the server SDK against the service', requires('nats'), () => {
  it('creates, retrieves and lists orders, paging past the first page with for await', async () => {
    const { checkout, sent } = client();
    const reference = unique('sdk-list');
    const created: Order[] = [];
    for (let i = 0; i < 5; i++) created.push(await checkout.orders.create(orderParams(reference)));
    expect(created[0]).toMatchObject({ object: 'order', amount: 2500, currency: 'EUR', reference, status: 'pending' });
    expect(await checkout.orders.retrieve(created[0]!.id)).toMatchObject({ id: created[0]!.id, reference });

    const first = await checkout.orders.list({ reference, limit: 2 });
    expect(first).toMatchObject({ object: 'list', has_more: true });
    expect(first.data).toHaveLength(2);

    sent.length = 0;
    const seen: string[] = [];
    for await (const order of checkout.orders.list({ reference, limit: 2 })) seen.push(order.id);
    expect(seen.toSorted()).toEqual(created.map((o) => o.id).toSorted());
    expect(new Set(seen).size).toBe(5);
    // Three pages of 2, 2 and 1, each after the last id of the one before.
    expect(sent).toHaveLength(3);
    expect(sent[1]).toContain(`starting_after=${seen[1]}`);
    expect(sent[2]).toContain(`starting_after=${seen[3]}`);
    expect(await checkout.orders.list({ reference, limit: 100 }).toArray()).toHaveLength(5);
  });

  it('expires an open order; a paid one is refused with order_not_open', async () => {
    const { checkout } = client();
    const open = await checkout.orders.create(orderParams(unique('sdk-expire')));
    expect(await checkout.orders.expire(open.id, { idempotencyKey: unique('expire') })).toMatchObject({ id: open.id, status: 'expired' });
    expect(await checkout.orders.expire(open.id)).toMatchObject({ id: open.id, status: 'expired' });
    const paid = await checkout.orders.create(orderParams(unique('sdk-expire-paid')));
    await payOrder(h.base, key, paid.id);
    await expect(checkout.orders.expire(paid.id)).rejects.toMatchObject({ name: 'InvalidRequestError', status: 409, code: 'order_not_open' });
  });

  it('refunds part of a paid order', async () => {
    const { checkout } = client();
    const order = await checkout.orders.create(orderParams(unique('sdk-refund')));
    await payOrder(h.base, key, order.id);
    const refund = await checkout.refunds.create(order.id, { amount: 500, reason: 'requested_by_customer', note: 'one cup broke' });
    expect(refund).toMatchObject({ object: 'refund', order: order.id, amount: 500, currency: 'EUR', status: 'succeeded', note: 'one cup broke' });
    expect(await checkout.orders.retrieve(order.id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 500 });
  });

  it('never over-refunds: of 20 concurrent 30% refunds through the SDK exactly three succeed, the rest are refused for what remains', async () => {
    // A refund that lost a race at the database (409 concurrent_change) would be sent again with its key, not surfaced.
    const { checkout } = client(h.base, { maxRetries: 5 });
    const order = await checkout.orders.create({ amount: 10_000, currency: 'EUR', reference: unique('sdk-race') });
    await payOrder(h.base, key, order.id);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        checkout.refunds.create(order.id, { amount: 3000, reason: 'duplicate' }).then(
          (r) => r.status,
          (e: unknown) => (e instanceof InvalidRequestError ? e.code : `unexpected ${String(e)}`),
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'succeeded')).toHaveLength(3);
    expect(outcomes.filter((o) => o !== 'succeeded')).toEqual(Array(17).fill('refund_exceeds_remaining'));
    expect(await checkout.orders.retrieve(order.id)).toMatchObject({ amount_refunded: 9000 });
  });

  it('keeps a customer with a saved card, then subscribes, pauses, resumes and cancels', async () => {
    const { checkout } = client();
    const customer = await checkout.customers.create({ email: 'ada@example.com', name: 'Ada', metadata: { plan: 'gold' } });
    expect(customer).toMatchObject({ object: 'customer', email: 'ada@example.com', metadata: { plan: 'gold' } });
    const card = await checkout.customers.cards.create(customer.id, { card: rawCard(cardOf('approved')) });
    expect(card).toMatchObject({ object: 'card', customer: customer.id, last4: cardOf('approved').slice(-4) });
    expect((await checkout.customers.cards.list(customer.id)).data.map((c) => c.id)).toEqual([card.id]);
    expect(await checkout.customers.cards.retrieve(customer.id, card.id)).toEqual(card);
    expect(await checkout.customers.update(customer.id, { name: 'Ada Lovelace' })).toMatchObject({ name: 'Ada Lovelace' });
    expect(await checkout.customers.retrieve(customer.id)).toMatchObject({ name: 'Ada Lovelace' });
    expect((await checkout.customers.list({ email: 'ada@example.com' }).toArray()).map((c) => c.id)).toContain(customer.id);

    const sub = await checkout.subscriptions.create({ customer: customer.id, card: card.id, amount: 990, currency: 'EUR', reference: unique('sdk-sub'), interval: 'month', trial_days: 7 });
    expect(sub).toMatchObject({ object: 'subscription', status: 'trialing' });
    expect((await checkout.subscriptions.pause(sub.id)).status).toBe('paused');
    expect((await checkout.subscriptions.resume(sub.id)).status).not.toBe('paused');
    expect((await checkout.subscriptions.list({ customer: customer.id }).toArray()).map((s) => s.id)).toEqual([sub.id]);
    expect((await checkout.subscriptions.cancel(sub.id)).status).toBe('canceled');

    expect(await checkout.customers.cards.del(customer.id, card.id)).toMatchObject({ id: card.id, deleted: true });
    expect(await checkout.customers.del(customer.id)).toMatchObject({ id: customer.id, deleted: true });
  });

  it('reads a payout and every one of its items, page by page, and answers a dispute', async () => {
    const shop = await h.merchant('SDK payouts shop');
    const { checkout } = client(h.base, {}, shop.test_secret_key);
    // Paid off-session with a saved card (a transfer has no chargebacks), then by transfer twice.
    const customer = await checkout.customers.create({ name: 'Grace' });
    const approved = shop.test_cards.find((c) => c.behaviour === 'approved')!.number;
    const card = await checkout.customers.cards.create(customer.id, { card: rawCard(approved) });
    const charged = await checkout.orders.create({ amount: 10_000, currency: 'EUR', reference: unique('sdk-payout'), customer: customer.id, card: card.id, confirm: true });
    expect(charged).toMatchObject({ status: 'paid', method: 'card', customer: customer.id });
    const paid: string[] = [charged.id];
    for (let i = 0; i < 2; i++) {
      const order = await checkout.orders.create({ amount: 10_000, currency: 'EUR', reference: unique('sdk-payout') });
      await payOrder(h.base, shop.test_secret_key, order.id);
      paid.push(order.id);
    }
    const run = await api<{ payouts: { id: string }[] }>(h.base, shop.test_secret_key, 'POST', '/v1/test_helpers/payouts/run', {});
    expect(run.json.payouts).toHaveLength(1);
    const listed = await checkout.payouts.list().toArray();
    expect(listed.map((p) => p.id)).toEqual([run.json.payouts[0]!.id]);
    const payout = await checkout.payouts.retrieve(listed[0]!.id);
    expect(payout).toMatchObject({ object: 'payout', item_count: 3, items: { object: 'list', has_more: false } });
    const items = await checkout.payouts.listItems(payout.id, { limit: 1 }).toArray();
    expect(items.map((i) => i.order).toSorted()).toEqual(paid.toSorted());
    expect(items.map((i) => i.id)).toEqual(payout.items.data.map((i) => i.id));

    const opened = await api<{ id: string }>(h.base, shop.test_secret_key, 'POST', `/v1/test_helpers/orders/${paid[0]}/dispute`, { reason: 'product_not_received', amount: 1000 });
    expect(opened.status, JSON.stringify(opened.json)).toBe(201);
    expect((await checkout.disputes.list({ order: paid[0] })).data.map((d) => d.id)).toEqual([opened.json.id]);
    expect(await checkout.disputes.retrieve(opened.json.id)).toMatchObject({ status: 'needs_response', amount: 1000 });
    const submitted = await checkout.disputes.submit(opened.json.id, { evidence: { tracking_number: '1Z999', notes: 'winning_evidence' } });
    expect(submitted).toMatchObject({ id: opened.json.id, submission_count: 1, evidence: { tracking_number: '1Z999' } });
  });

  it('creates, disables, rotates and deletes a webhook endpoint; a rotation retried with its key answers the same secret', async () => {
    const { checkout } = client();
    const endpoint = await checkout.webhookEndpoints.create({ url: 'http://127.0.0.1:9/sdk-hooks', enabled_events: ['order.paid'], description: 'sdk' });
    expect(endpoint).toMatchObject({ object: 'webhook_endpoint', status: 'enabled', secret: expect.stringMatching(/^whsec_/) });
    expect(await checkout.webhookEndpoints.update(endpoint.id, { disabled: true })).toMatchObject({ status: 'disabled', disabled_reason: 'by_merchant' });
    expect(await checkout.webhookEndpoints.retrieve(endpoint.id)).toMatchObject({ id: endpoint.id, status: 'disabled' });
    const idempotencyKey = unique('sdk-rotate');
    const rotated = await checkout.webhookEndpoints.rotateSecret(endpoint.id, { overlap_seconds: 60 }, { idempotencyKey });
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect((await checkout.webhookEndpoints.rotateSecret(endpoint.id, { overlap_seconds: 60 }, { idempotencyKey })).secret).toBe(rotated.secret);
    expect(await checkout.webhookEndpoints.del(endpoint.id)).toMatchObject({ id: endpoint.id, deleted: true });
    await expect(checkout.webhookEndpoints.retrieve(endpoint.id)).rejects.toMatchObject({ name: 'InvalidRequestError', status: 404, code: 'resource_missing' });
  });

  it('creates, lists and deactivates a payment link, and reads an order\'s events', async () => {
    const { checkout } = client();
    const link = await checkout.links.create({ amount: 1000, currency: 'EUR', reference: unique('sdk-link'), type: 'single_use' });
    expect(await checkout.links.retrieve(link.id)).toMatchObject({ id: link.id, status: 'active' });
    expect((await checkout.links.list({ limit: 100 })).data.map((l) => l.id)).toContain(link.id);
    expect(await checkout.links.deactivate(link.id)).toMatchObject({ status: 'deactivated', active: false });

    const order = await checkout.orders.create(orderParams(unique('sdk-events')));
    const events = await checkout.events.list({ order_id: order.id }).toArray();
    expect(events.map((e) => e.type)).toContain('order.created');
    expect(await checkout.events.retrieve(events[0]!.id)).toMatchObject({ id: events[0]!.id, order_id: order.id });
    expect((await checkout.webhookEndpoints.list()).data.some((e) => e.is_default)).toBe(true);
  });

  it('throws InvalidRequestError with the param, AuthenticationError and IdempotencyError, each with its request id', async () => {
    const { checkout, sent } = client();
    const bad = await checkout.orders.create({ ...orderParams('sdk-bad'), amount: 0, line_items: [] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidRequestError);
    expect(bad).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'amount_invalid', param: 'amount', requestId: expect.stringMatching(/^req_/) });
    expect(sent).toHaveLength(1);

    const stranger = client(h.base, {}, 'sk_test_not_a_real_key_at_all');
    const denied = await stranger.checkout.orders.list().catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(AuthenticationError);
    expect(denied).toMatchObject({ status: 401, requestId: expect.stringMatching(/^req_/) });
    expect(stranger.sent).toHaveLength(1);

    const idempotencyKey = unique('sdk-key');
    await checkout.orders.create(orderParams('sdk-key-1'), { idempotencyKey });
    const again = await checkout.orders.create(orderParams('sdk-key-1'), { idempotencyKey });
    const reused = await checkout.orders.create({ ...orderParams('sdk-key-2'), amount: 2600, line_items: [] }, { idempotencyKey }).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(IdempotencyError);
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused', requestId: expect.stringMatching(/^req_/) });
    expect(again.reference).toBe('sdk-key-1');
  });

  it('retries a create whose answer was lost after the server committed, with the same key: one order, two attempts', async () => {
    const proxy = await CuttingProxy.start(h.service.port, 'cut-after-commit', 'POST /v1/orders');
    try {
      const { checkout, sent } = client(proxy.base);
      const reference = unique('sdk-cut');
      const order = await checkout.orders.create(orderParams(reference));
      expect(proxy.fired).toBe(true);
      expect(sent).toEqual(['POST /v1/orders', 'POST /v1/orders']);
      expect(proxy.requests.filter((r) => r.startsWith('POST /v1/orders '))).toHaveLength(2);
      expect(order).toMatchObject({ reference, amount: 2500 });
      const stored = await ordersWithReference(reference);
      expect(stored.map((o) => o.id)).toEqual([order.id]);
    } finally {
      await proxy.close();
    }
  });

  it('without retries, the lost answer is an ApiConnectionError, and the order exists anyway', async () => {
    const proxy = await CuttingProxy.start(h.service.port, 'cut-after-commit', 'POST /v1/orders');
    try {
      const { checkout } = client(proxy.base, { maxRetries: 0 });
      const reference = unique('sdk-cut-noretry');
      const idempotencyKey = unique('sdk-cut-key');
      await expect(checkout.orders.create(orderParams(reference), { idempotencyKey })).rejects.toMatchObject({ name: 'ApiConnectionError' });
      expect(await ordersWithReference(reference)).toHaveLength(1);
      // The caller's own retry with its key gets the same order back.
      const replay = await checkout.orders.create(orderParams(reference), { idempotencyKey });
      expect((await ordersWithReference(reference)).map((o) => o.id)).toEqual([replay.id]);
    } finally {
      await proxy.close();
    }
  });

  it('retries the other creates the same way: a customer and a refund whose answers were lost exist once', async () => {
    const proxy = await CuttingProxy.start(h.service.port, 'cut-after-commit', 'POST /v1/customers');
    try {
      const { checkout, sent } = client(proxy.base);
      const email = `${unique('cut')}@example.com`;
      const customer = await checkout.customers.create({ email });
      expect(proxy.fired).toBe(true);
      expect(sent).toEqual(['POST /v1/customers', 'POST /v1/customers']);
      expect((await checkout.customers.list({ email }).toArray()).map((c) => c.id)).toEqual([customer.id]);
    } finally {
      await proxy.close();
    }
    const order = await client().checkout.orders.create(orderParams(unique('sdk-cut-refund')));
    await payOrder(h.base, key, order.id);
    const refundProxy = await CuttingProxy.start(h.service.port, 'cut-after-commit', `POST /v1/orders/${order.id}/refunds`);
    try {
      const { checkout, sent } = client(refundProxy.base);
      const refund = await checkout.refunds.create(order.id, { amount: 700, reason: 'other' });
      expect(refundProxy.fired).toBe(true);
      expect(sent).toHaveLength(2);
      const after = await checkout.orders.retrieve(order.id);
      expect(after.refunds.map((r) => r.id)).toEqual([refund.id]);
      expect(after.amount_refunded).toBe(700);
    } finally {
      await refundProxy.close();
    }
  });

  it('retries a 503 and creates once', async () => {
    const proxy = await CuttingProxy.start(h.service.port, 'answer-503', 'POST /v1/orders');
    try {
      const { checkout, sent } = client(proxy.base);
      const reference = unique('sdk-503');
      const order = await checkout.orders.create(orderParams(reference));
      expect(proxy.fired).toBe(true);
      expect(sent).toEqual(['POST /v1/orders', 'POST /v1/orders']);
      expect((await ordersWithReference(reference)).map((o) => o.id)).toEqual([order.id]);
    } finally {
      await proxy.close();
    }
  });
});

// ---------------------------------------------------------------- drift from the OpenAPI document

/** Each key of T, marked as the type has it; a key added to or dropped from T, or a changed mark, fails the typecheck here. */
type Presence<T> = { [K in keyof T]-?: object extends Pick<T, K> ? 'optional' : 'required' };
const shape =
  <T,>() =>
  (presence: Presence<T>): Record<string, 'required' | 'optional'> =>
    presence;

// The SDK's types as the typecheck holds them; the test below holds them to the served document.
const RESPONSES = {
  Order: shape<Order>()({ id: 'required', object: 'required', reference: 'required', amount: 'required', currency: 'required', status: 'required', checkout_url: 'required', line_items: 'required', return_url: 'required', method: 'required', settlement: 'required', refunds: 'required', amount_refunded: 'required', capture_method: 'required', amount_captured: 'required', authorization_expires_at: 'required', disputes: 'required', attempts: 'required', created: 'required', expires_at: 'required', livemode: 'required', subscription: 'required', subscription_cycle: 'required', payment_link: 'required', customer: 'required' }),
  PaymentAttempt: shape<PaymentAttempt>()({ id: 'required', method: 'required', route: 'required', status: 'required', decline_code: 'required', authentication: 'required', card_brand: 'required', card_last4: 'required', retry: 'required', card: 'required', created: 'required' }),
  Refund: shape<Refund>()({ id: 'required', object: 'required', order: 'required', reference: 'required', amount: 'required', currency: 'required', reason: 'required', note: 'required', status: 'required', failure_code: 'required', created: 'required' }),
  Payout: shape<Payout>()({ id: 'required', object: 'required', amount: 'required', currency: 'required', status: 'required', totals: 'required', item_count: 'required', order_count: 'required', destination: 'required', arrival_date: 'required', cutoff: 'required', failure_code: 'required', livemode: 'required', created: 'required' }),
  PayoutItem: shape<PayoutItem>()({ id: 'required', object: 'required', type: 'required', order: 'required', refund: 'required', dispute: 'required', reference: 'required', currency: 'required', gross: 'required', fees: 'required', net: 'required', created: 'required' }),
  Dispute: shape<Dispute>()({ id: 'required', object: 'required', order: 'required', reference: 'required', amount: 'required', currency: 'required', reason: 'required', status: 'required', evidence_due_by: 'required', evidence: 'required', submission_count: 'required', fee: 'required', fee_currency: 'required', livemode: 'required', created: 'required', closed: 'required' }),
  Evidence: shape<Evidence>()({ object: 'required', order: 'required', customer_email: 'required', customer_name: 'required', shipping_carrier: 'required', tracking_number: 'required', delivered_at: 'required', product_description: 'required', notes: 'required', service: 'required', updated: 'required' }),
  Customer: shape<Customer>()({ id: 'required', object: 'required', email: 'required', name: 'required', reference: 'required', metadata: 'required', livemode: 'required', test_clock: 'required', created: 'required' }),
  SavedCard: shape<SavedCard>()({ id: 'required', object: 'required', customer: 'required', brand: 'required', last4: 'required', exp_month: 'required', exp_year: 'required', fingerprint: 'required', livemode: 'required', created: 'required' }),
  Subscription: shape<Subscription>()({ id: 'required', object: 'required', customer: 'required', card: 'required', amount: 'required', currency: 'required', reference: 'required', line_items: 'required', interval: 'required', interval_count: 'required', start_date: 'required', trial_days: 'required', cycles: 'required', after_failed_retries: 'required', status: 'required', next_cycle: 'required', next_charge_at: 'required', retries: 'required', cancel_at_period_end: 'required', canceled_at: 'required', cancellation_reason: 'required', test_clock: 'required', livemode: 'required', created: 'required', charged_cycles: 'required' }),
  PaymentLink: shape<PaymentLink>()({ id: 'required', object: 'required', url: 'required', type: 'required', status: 'required', active: 'required', amount: 'required', currency: 'required', reference: 'required', line_items: 'required', return_url: 'required', expires_at: 'required', completed_payments: 'required', deactivated_at: 'required', created: 'required', livemode: 'required' }),
  WebhookEndpoint: shape<WebhookEndpoint>()({ id: 'required', object: 'required', url: 'required', enabled_events: 'required', description: 'required', status: 'required', disabled_reason: 'required', is_default: 'required', livemode: 'required', created: 'required' }),
  WebhookEndpointWithSecret: shape<WebhookEndpointWithSecret>()({ id: 'required', object: 'required', url: 'required', enabled_events: 'required', description: 'required', status: 'required', disabled_reason: 'required', is_default: 'required', livemode: 'required', created: 'required', secret: 'required', old_secret_expires_at: 'optional' }),
  Event: shape<Event>()({ id: 'required', object: 'required', type: 'required', created: 'required', livemode: 'required', subject: 'required', order_id: 'required', reference: 'required', sequence: 'required', data: 'required' }),
};
const BODIES = {
  createOrder: shape<OrderCreateParams>()({ amount: 'required', currency: 'required', reference: 'required', line_items: 'optional', return_url: 'optional', expires_at: 'optional', capture_method: 'optional', customer: 'optional', card: 'optional', confirm: 'optional' }),
  captureOrder: shape<OrderCaptureParams>()({ amount: 'optional' }),
  createRefund: shape<RefundCreateParams>()({ amount: 'optional', reason: 'required', note: 'optional' }),
  submitDispute: shape<DisputeSubmitParams>()({ evidence: 'optional' }),
  createPaymentLink: shape<PaymentLinkCreateParams>()({ amount: 'required', currency: 'required', reference: 'required', type: 'required', line_items: 'optional', return_url: 'optional', expires_at: 'optional' }),
  createCustomer: shape<CustomerCreateParams>()({ email: 'optional', name: 'optional', reference: 'optional', metadata: 'optional', test_clock: 'optional' }),
  updateCustomer: shape<CustomerUpdateParams>()({ email: 'optional', name: 'optional', reference: 'optional', metadata: 'optional' }),
  createSubscription: shape<SubscriptionCreateParams>()({ customer: 'required', card: 'required', amount: 'required', currency: 'required', reference: 'required', line_items: 'optional', interval: 'required', interval_count: 'optional', start_date: 'optional', trial_days: 'optional', cycles: 'optional', after_failed_retries: 'optional' }),
  updateSubscription: shape<SubscriptionUpdateParams>()({ card: 'optional' }),
  cancelSubscription: shape<SubscriptionCancelParams>()({ at_period_end: 'optional' }),
  createWebhookEndpoint: shape<WebhookEndpointCreateParams>()({ url: 'required', enabled_events: 'optional', description: 'optional' }),
  updateWebhookEndpoint: shape<WebhookEndpointUpdateParams>()({ url: 'optional', enabled_events: 'optional', description: 'optional', disabled: 'optional' }),
  rotateWebhookSecret: shape<WebhookEndpointRotateSecretParams>()({ overlap_seconds: 'optional' }),
};
const QUERIES = {
  listOrders: shape<OrderListParams>()({ limit: 'optional', starting_after: 'optional', reference: 'optional', payment_link: 'optional' }),
  listPayouts: shape<PayoutListParams>()({ limit: 'optional', starting_after: 'optional', status: 'optional' }),
  listPayoutItems: shape<ListParams>()({ limit: 'optional', starting_after: 'optional' }),
  listDisputes: shape<DisputeListParams>()({ limit: 'optional', starting_after: 'optional', order: 'optional' }),
  listPaymentLinks: shape<ListParams>()({ limit: 'optional', starting_after: 'optional' }),
  listCustomers: shape<CustomerListParams>()({ limit: 'optional', starting_after: 'optional', email: 'optional' }),
  listSubscriptions: shape<SubscriptionListParams>()({ limit: 'optional', starting_after: 'optional', customer: 'optional' }),
  listEvents: shape<EventListParams>()({ limit: 'optional', starting_after: 'optional', type: 'optional', order_id: 'optional', reference: 'optional' }),
};

/** Every operation the SDK calls with POST, PATCH or DELETE. */
const MUTATIONS = [
  'createOrder', 'captureOrder', 'voidOrder', 'expireOrder', 'createRefund', 'submitDispute', 'createPaymentLink', 'deactivatePaymentLink',
  'createCustomer', 'updateCustomer', 'deleteCustomer', 'createCard', 'deleteCard',
  'createSubscription', 'updateSubscription', 'cancelSubscription', 'pauseSubscription', 'resumeSubscription',
  'createWebhookEndpoint', 'updateWebhookEndpoint', 'deleteWebhookEndpoint', 'rotateWebhookSecret',
];

interface SchemaJson {
  properties?: Record<string, unknown>;
  required?: string[];
}
interface OperationJson {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: { 'application/json': { schema: SchemaJson } } };
}

function presenceOf(schema: SchemaJson): Record<string, 'required' | 'optional'> {
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(Object.keys(schema.properties ?? {}).map((k) => [k, required.has(k) ? 'required' : 'optional']));
}
const sorted = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).toSorted(([a], [b]) => a.localeCompare(b)));

describe('the server SDK\'s types and GET /v1/openapi.json', requires('nats'), () => {
  it('name the same fields, required alike, for every object, body and list query the SDK uses', async () => {
    const res = await fetch(`${h.base}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, OperationJson>>; components: { schemas: Record<string, SchemaJson> } };
    const ops = new Map(Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod)).map((op) => [op.operationId, op]));
    for (const [name, sdk] of Object.entries(RESPONSES)) {
      const schema = doc.components.schemas[name];
      expect(schema, name).toBeDefined();
      expect(sorted(sdk), `SDK type of ${name}`).toEqual(sorted(presenceOf(schema!)));
    }
    for (const [operationId, sdk] of Object.entries(BODIES)) {
      const schema = ops.get(operationId)?.requestBody?.content['application/json'].schema;
      expect(schema, operationId).toBeDefined();
      expect(sorted(sdk), `SDK params of ${operationId}`).toEqual(sorted(presenceOf(schema!)));
    }
    // The SDK sends an Idempotency-Key on every call that changes something, and retries it: each must take one.
    for (const operationId of MUTATIONS) {
      const headers = (ops.get(operationId)?.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
      expect(headers, operationId).toContain('Idempotency-Key');
    }
    for (const [operationId, sdk] of Object.entries(QUERIES)) {
      const params = (ops.get(operationId)?.parameters ?? []).filter((p) => p.in === 'query');
      expect(params.length, operationId).toBeGreaterThan(0);
      expect(sorted(sdk), `SDK list params of ${operationId}`).toEqual(sorted(Object.fromEntries(params.map((p) => [p.name, p.required ? 'required' : 'optional']))));
    }
  });
});
