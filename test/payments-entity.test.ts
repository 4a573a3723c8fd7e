// Payments as entities: read back by id with their attempts and capture, and the migration that grouped the
// attempts of earlier versions into payments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import type { Knex } from 'knex';
import { CheckoutService, PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { MIGRATIONS } from '../src/kernel/adapters/postgres/migrations/index.ts';
import { createTestDatabase } from './support/database.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';
import { pageToken } from './support/payments.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Payments entity shop');
});
afterAll(async () => {
  await svc?.close();
});

const scope = () => ({ merchantId: shop.merchant_id, livemode: false });

async function newOrder() {
  const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' }, payload: orderBody() });
  return res.json().id as string;
}

describe('a payment read back by id through the core', () => {
  it('a soft decline retried on the alternative route: one payment, two legs, captured once', async () => {
    const orderId = await newOrder();
    const checkout = createClient(CheckoutService, createRouterTransport(svc.core.routes));
    const checkoutId = orderId.slice(4);
    const token = await pageToken(svc.core.routes, checkoutId);
    const card = shop.test_cards.find((c) => c.behaviour === 'soft_decline')!;
    const { outcome } = await checkout.submitCardPayment(
      { checkoutId, submissionId: 'sub-soft', card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' } },
      { headers: { 'checkout-token': token } },
    );
    expect(outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    const { id } = await svc.db.knex('payments').where({ order_id: orderId }).first();
    const { payment, attempts } = await svc.core.payments.getPayment(scope(), id);
    expect(payment).toMatchObject({ id, orderId, method: 'card', amount: 2500n, currency: 'EUR', status: 'succeeded', submissionId: 'sub-soft' });
    expect(attempts.map((a) => [a.route, a.status, a.declineCode, a.retry, a.paymentId])).toEqual([
      ['simulated_alpha', 'failed', 'insufficient_funds', false, id],
      ['simulated_beta', 'succeeded', null, true, id],
    ]);
    expect(payment.capture).toMatchObject({ amount: 2500n, processorRef: attempts[1]!.processorRef });
    expect(payment.capture?.processorRef).toMatch(/^beta_/);
  });

  it('a transfer is a payment of its own; another merchant or mode cannot read it', async () => {
    const orderId = await newOrder();
    await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${orderId}/simulate_transfer`, headers: { authorization: `Bearer ${shop.test_secret_key}` } });
    const { id } = await svc.db.knex('payments').where({ order_id: orderId }).first();
    const record = await svc.core.payments.getPayment(scope(), id);
    expect(record.payment).toMatchObject({ method: 'bank_transfer', status: 'succeeded', submissionId: null });
    expect(record.attempts).toHaveLength(1);
    await expect(svc.core.payments.getPayment({ merchantId: shop.merchant_id, livemode: true }, id)).rejects.toMatchObject({ code: 'payment.not_found' });
    const other = await svc.sandbox('Another shop');
    await expect(svc.core.payments.getPayment({ merchantId: other.merchant_id, livemode: false }, id)).rejects.toMatchObject({ code: 'payment.not_found' });
  });
});

describe('migration 008: the attempts of earlier versions grouped into payments', () => {
  let knex: Knex;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await createTestDatabase({ migrate: false });
    knex = db.knex;
    drop = db.drop;
  });
  afterAll(async () => {
    await drop?.();
  });

  it('one payment per submission (its legs together), one per transfer, with status and capture of the latest leg', async () => {
    const upTo = (last: string) => ({
      getMigrations: async () => MIGRATIONS.slice(0, MIGRATIONS.findIndex(([name]) => name === last) + 1),
      getMigrationName: (m: (typeof MIGRATIONS)[number]) => m[0],
      getMigration: async (m: (typeof MIGRATIONS)[number]) => m[1],
    });
    await knex.migrate.latest({ migrationSource: upTo('007-event-subjects') });
    const t = new Date('2026-11-01T10:00:00Z');
    const later = (s: number) => new Date(t.getTime() + s * 1000);
    await knex('merchants').insert({ id: 'mer_m', name: 'M', checkout_host: 'http://pay.test', settlement_currency: 'EUR', created_at: t });
    await knex('orders').insert({
      id: 'ord_o', merchant_id: 'mer_m', livemode: false, reference: 'R', amount: 2500, currency: 'EUR', status: 'paid', line_items: '[]',
      checkout_url: 'http://pay.test/c/o', version: 3, created_at: t, updated_at: t, expires_at: later(86_400), checkout_token: 'tok',
    });
    const leg = (id: string, submission: string | null, status: string, retry: boolean, at: number, extra: Record<string, unknown> = {}) => ({
      id, order_id: 'ord_o', merchant_id: 'mer_m', livemode: false, submission_id: submission, method: submission ? 'card' : 'bank_transfer',
      route: retry ? 'simulated_beta' : 'simulated_alpha', status, authentication: 'not_required', retry, created_at: later(at), updated_at: later(at + 1), ...extra,
    });
    await knex('payment_attempts').insert([
      leg('att_s1first000000000000000', 'sub-1', 'failed', false, 1, { decline_code: 'insufficient_funds' }),
      leg('att_s1retry000000000000000', 'sub-1', 'failed', true, 2, { decline_code: 'expired_card' }),
      leg('att_s2only0000000000000000', 'sub-2', 'succeeded', false, 3, { processor_ref: 'alpha_captured' }),
      leg('att_transfer00000000000000', null, 'failed', false, 4),
    ]);
    await knex.migrate.latest({ migrationSource: upTo(MIGRATIONS.at(-1)![0]) });

    const payments = await knex('payments').orderBy('created_at');
    expect(payments.map((p) => [p.id, p.submission_id, p.status, p.method, p.capture_ref, p.captured_amount])).toEqual([
      ['pay_s1first000000000000000', 'sub-1', 'failed', 'card', null, null],
      ['pay_s2only0000000000000000', 'sub-2', 'succeeded', 'card', 'alpha_captured', '2500'],
      ['pay_transfer00000000000000', null, 'failed', 'bank_transfer', null, null],
    ]);
    const legs = await knex('payment_attempts').orderBy('created_at').select('id', 'payment_id');
    expect(legs.map((l) => l.payment_id)).toEqual(['pay_s1first000000000000000', 'pay_s1first000000000000000', 'pay_s2only0000000000000000', 'pay_transfer00000000000000']);
  });
});
