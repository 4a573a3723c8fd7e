// The rules of a card payment's synchronous path, on the in-memory fakes with scripted processors:
// approval and capture, a soft decline retried once on the alternative route, a hard one not, a
// challenge, a repeated submission, and the refusals before any processor is asked (what
// test/payments.test.ts and test/payment-races.test.ts prove through Postgres and the checkout).
import { describe, expect, test } from 'vitest';
import type { Card } from '../../src/modules/payment/domain/card.ts';
import { ledgerTransactionId } from '../../src/modules/ledger/domain/ledger.ts';
import type { PayOrderCommand } from '../../src/modules/payment/application/pay-order.ts';
import { givenMerchant, givenOrder, unique } from '../support/builders.ts';
import { memoryCore } from '../support/memory-core.ts';

const CARD: Card = { number: '4242424242424242', expMonth: 12, expYear: 2030, cvc: '123', name: 'Ada Lovelace', brand: 'visa', last4: '4242' };

async function checkout(merchantOverrides: Parameters<typeof givenMerchant>[1] = {}) {
  const core = memoryCore();
  const { merchant } = await givenMerchant(core.world, merchantOverrides);
  const order = await givenOrder(core.world, merchant);
  const pay = (overrides: Partial<PayOrderCommand> = {}) =>
    core.payments.payOrder({ orderId: order.id, authorize: () => undefined, submissionId: unique('sub_'), instrument: { method: 'card', card: CARD }, client: { address: '198.51.100.7' }, ...overrides });
  return { core, merchant, order, pay };
}

describe('paying an order by card', () => {
  test('approved on the primary route: captured there, the order paid with order.paid and the capture posted', async () => {
    const { core, order, pay } = await checkout();
    const outcome = await pay();
    expect(outcome).toMatchObject({ status: 'succeeded', declineCode: undefined, settled: { order: { status: 'paid', amountCaptured: 2500n } } });
    expect(core.primary.calls.map((c) => c.operation)).toEqual(['authorize', 'capture']);
    expect(core.primary.callsOf('authorize')[0]!.args[0]).toMatchObject({ amount: 2500n, currency: 'EUR', livemode: false, card: { last4: '4242' } });
    expect(core.alternative.calls).toEqual([]);
    const [record] = await core.world.reads.payments.listForOrder(order.id);
    expect(record!.payment).toMatchObject({ status: 'succeeded', capture: { amount: 2500n, processorRef: expect.stringMatching(/^scripted_primary_capture_/) } });
    expect(core.world.events().map((e) => e.type)).toEqual(['order.created', 'order.paid']);
    expect(core.world.tables.ledger.has(ledgerTransactionId('capture', record!.payment.id))).toBe(true);
  });

  test('a soft decline is retried once on the alternative route, as a second leg of the same payment', async () => {
    const { core, order, pay } = await checkout();
    core.primary.next('authorize', { decline: 'issuer_unavailable' });
    const outcome = await pay();
    expect(outcome.status).toBe('succeeded');
    const [record] = await core.world.reads.payments.listForOrder(order.id);
    expect(record!.attempts.map((a) => [a.route, a.status, a.retry, a.declineCode])).toEqual([
      ['scripted_primary', 'failed', false, 'issuer_unavailable'],
      ['scripted_alternative', 'succeeded', true, null],
    ]);
    expect(core.alternative.calls.map((c) => c.operation)).toEqual(['authorize', 'capture']);
  });

  test('a soft decline on both routes fails the order once, with the alternative\'s code', async () => {
    const { core, order, pay } = await checkout();
    core.primary.next('authorize', { decline: 'insufficient_funds' });
    core.alternative.next('authorize', { decline: 'insufficient_funds' });
    const outcome = await pay();
    expect(outcome).toMatchObject({ status: 'failed', declineCode: 'insufficient_funds', settled: { order: { status: 'failed' } } });
    expect(core.world.events().filter((e) => e.type === 'order.failed')).toHaveLength(1);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'failed' });
  });

  test('a hard decline is never retried: the order fails with order.failed, nothing captured or posted', async () => {
    const { core, pay } = await checkout();
    core.primary.next('authorize', { decline: 'stolen_card' });
    const outcome = await pay();
    expect(outcome).toMatchObject({ status: 'failed', declineCode: 'stolen_card' });
    expect(core.alternative.calls).toEqual([]);
    expect(core.primary.callsOf('capture')).toEqual([]);
    expect(core.world.events().at(-1)).toMatchObject({ type: 'order.failed', data: expect.objectContaining({}) });
    expect(core.world.ledger()).toEqual([]);
    // A failed order still takes payment until it expires.
    expect((await pay()).status).toBe('succeeded');
  });

  test('a challenge leaves the payment waiting for the cardholder, with the code the issuer accepts', async () => {
    const { core, order, pay } = await checkout();
    core.primary.next('authorize', { challenge: '654321' });
    const outcome = await pay();
    expect(outcome).toMatchObject({ status: 'requires_authentication', challenge: { testCode: '654321' } });
    const [record] = await core.world.reads.payments.listForOrder(order.id);
    expect(record!.attempts[0]).toMatchObject({ status: 'requires_authentication', authentication: 'required', challengeTestCode: '654321' });
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'pending' });
    expect(core.primary.callsOf('capture')).toEqual([]);
  });

  test('the same submission again answers the first outcome and asks no processor again', async () => {
    const { core, order, pay } = await checkout();
    const submissionId = unique('sub_');
    const first = await pay({ submissionId });
    const again = await pay({ submissionId });
    expect(again.status).toBe(first.status);
    expect(again.settled.order.id).toBe(order.id);
    expect(core.primary.callsOf('authorize')).toHaveLength(1);
    expect(await core.world.reads.payments.listForOrder(order.id)).toHaveLength(1);
  });

  test('refused before any processor is asked: a method the merchant has not switched on, a paid order, the caller\'s own refusal', async () => {
    const transfersOnly = await checkout({ paymentMethods: ['bank_transfer'] });
    await expect(transfersOnly.pay()).rejects.toMatchObject({ code: 'checkout.method_unavailable' });
    expect(transfersOnly.core.primary.calls).toEqual([]);

    const { core, pay } = await checkout();
    await pay();
    await expect(pay()).rejects.toMatchObject({ code: expect.stringMatching(/^checkout\./) });
    await expect(
      pay({
        authorize: () => {
          throw Object.assign(new Error('wrong checkout token'), { code: 'checkout.token_invalid' });
        },
      }),
    ).rejects.toMatchObject({ code: 'checkout.token_invalid' });
    expect(core.primary.callsOf('authorize')).toHaveLength(1);
  });
});

describe('routes as data', () => {
  test('a merchant\'s own routes decide: its first route is asked first, failover goes down its list', async () => {
    const { core, merchant, order, pay } = await checkout();
    await core.world.uow.run((tx) =>
      tx.paymentRoutes.replace(merchant.id, false, [
        { processor: 'scripted_alternative', processorAccountId: null },
        { processor: 'scripted_primary', processorAccountId: null },
      ]),
    );
    core.alternative.next('authorize', { decline: 'issuer_unavailable' });
    expect((await pay()).status).toBe('succeeded');
    const [record] = await core.world.reads.payments.listForOrder(order.id);
    expect(record!.attempts.map((a) => [a.route, a.status])).toEqual([
      ['scripted_alternative', 'failed'],
      ['scripted_primary', 'succeeded'],
    ]);
  });

  test('a route naming a processor the mode does not register is skipped; no route left fails the payment without asking anyone', async () => {
    const { core, merchant, pay } = await checkout();
    await core.world.uow.run((tx) => tx.paymentRoutes.replace(merchant.id, false, [{ processor: 'unknown_acquirer', processorAccountId: null }]));
    const outcome = await pay();
    expect(outcome).toMatchObject({ status: 'failed', declineCode: 'processing_unavailable' });
    expect([...core.primary.calls, ...core.alternative.calls]).toEqual([]);
  });
});
