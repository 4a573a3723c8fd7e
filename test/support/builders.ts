// Builders of the domain objects tests need (merchants, orders, payments, refunds, disputes, ledger
// transactions), and "given" helpers that store them through the ports: the same helpers seed the
// in-memory fakes (test/support/fakes) and the Postgres adapters, so a contract suite runs one set of
// cases on both. A test passes as overrides the values it asserts on, so they stay visible in it.
import { randomBytes } from 'node:crypto';
import { EVENT_ID_PREFIX, orderEvent, orderEventData, type DomainEvent } from '../../src/modules/event/domain/domain-event.ts';
import type { Dispute } from '../../src/modules/dispute/domain/dispute.entity.ts';
import { capturePosting } from '../../src/modules/ledger/domain/postings.ts';
import type { LedgerTransaction } from '../../src/modules/ledger/domain/ledger.ts';
import type { Caller } from '../../src/kernel/domain/caller.ts';
import { authorizationExpiry } from '../../src/modules/order/domain/capture.ts';
import { createOrder, type CreateOrderCommand } from '../../src/modules/order/domain/create-order.ts';
import { ORDER_ID_PREFIX, type Order } from '../../src/modules/order/domain/order.entity.ts';
import { markAuthorized, markPaid } from '../../src/modules/order/domain/order-transitions.ts';
import { ATTEMPT_ID_PREFIX, type PaymentMethod } from '../../src/modules/payment/domain/payment-attempt.entity.ts';
import { markAuthorized as markLegAuthorized, markCaptured, PAYMENT_ID_PREFIX, recordAuthorization, startPayment, type PaymentChange, type PaymentRecord } from '../../src/modules/payment/domain/payment.entity.ts';
import { settlementBreakdown } from '../../src/modules/payment/domain/settlement.ts';
import { REFUND_ID_PREFIX, type Refund } from '../../src/modules/refund/domain/refund.entity.ts';
import type { MerchantRecord, MerchantRepository, NewApiKey } from '../../src/modules/merchant/ports/merchant-repository.port.ts';
import type { OrderCreationStore } from '../../src/modules/order/ports/order-creation-store.port.ts';
import type { Clock } from '../../src/kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../src/kernel/ports/id-generator.port.ts';
import type { UnitOfWork } from '../../src/kernel/ports/unit-of-work.port.ts';

/** A unique suffix, so that builders used against one database never collide. */
export const unique = (prefix = '') => `${prefix}${randomBytes(8).toString('hex')}`;

/** A merchant record: EUR settlement, cards and transfers switched on. */
export function aMerchant(overrides: Partial<MerchantRecord> = {}): MerchantRecord {
  return {
    id: unique('mer_'),
    name: 'Tea Shop',
    checkoutHost: 'https://pay.example',
    settlementCurrency: 'EUR',
    paymentMethods: ['card', 'wallet', 'bank_transfer'],
    createdAt: new Date('2026-03-01T09:00:00.000Z'),
    ...overrides,
  };
}

/** An API key to store; its secret is what a caller would send. */
export function anApiKey(overrides: Partial<NewApiKey> = {}): NewApiKey {
  const livemode = overrides.livemode ?? false;
  const kind = overrides.kind ?? 'secret';
  // Shaped as issued keys are (parseApiKey): sk_|pk_, the mode, then 32 alphanumerics.
  const secret = `${kind === 'secret' ? 'sk' : 'pk'}_${livemode ? 'live' : 'test'}_${randomBytes(16).toString('hex')}`;
  return { id: unique('key_'), kind, livemode, secret, ...overrides };
}

/** The caller an API key of `merchant` stands for. */
export function aCaller(merchant: MerchantRecord, overrides: Partial<Caller> = {}): Caller {
  return { keyId: unique('key_'), merchantId: merchant.id, livemode: false, keyKind: 'secret', checkoutHost: merchant.checkoutHost, ...overrides };
}

/** What creates the default order: 25.00 EUR of tea and a teapot. */
export function anOrderCommand(overrides: Partial<CreateOrderCommand> = {}): CreateOrderCommand {
  return {
    amount: 2500n,
    currency: 'EUR',
    reference: 'INV-1001',
    lineItems: [
      { name: 'Green tea', amount: 1500n },
      { name: 'Teapot', amount: 1000n },
    ],
    returnUrl: 'https://shop.example/thanks',
    expiresAt: undefined,
    ...overrides,
  };
}

/** A pending order of `merchant` with its order.created event, made by the domain as the use case makes it. */
export function anOrder(merchant: MerchantRecord, options: { command?: Partial<CreateOrderCommand>; livemode?: boolean; now?: Date; id?: string } = {}): { order: Order; event: DomainEvent } {
  return createOrder(anOrderCommand(options.command), {
    orderId: options.id ?? unique(ORDER_ID_PREFIX),
    eventId: unique(EVENT_ID_PREFIX),
    merchantId: merchant.id,
    livemode: options.livemode ?? false,
    checkoutHost: merchant.checkoutHost,
    checkoutToken: unique('tok_'),
    clientSecretHash: undefined,
    now: options.now ?? new Date('2026-03-02T10:00:00.000Z'),
  });
}

/** An order as the orders table gives it back: its optional fields present, null when unset. */
export function asStored(order: Order): Order {
  return {
    ...order,
    clientSecretHash: order.clientSecretHash ?? null,
    clientSecretExpiresAt: order.clientSecretExpiresAt ?? null,
    customerId: order.customerId ?? null,
    paymentLinkId: order.paymentLinkId ?? null,
    subscriptionId: order.subscriptionId ?? null,
    subscriptionCycle: order.subscriptionCycle ?? null,
  };
}

/** A card payment of `order` just started on `route`: processing, its first leg with it. */
export function aCardPayment(order: Order, options: { route?: string; submissionId?: string | null; method?: PaymentMethod; now?: Date; clientAddress?: string | null } = {}): PaymentChange {
  const method = options.method ?? 'card';
  const started = startPayment({
    paymentId: unique(PAYMENT_ID_PREFIX),
    attemptId: unique(ATTEMPT_ID_PREFIX),
    orderId: order.id,
    merchantId: order.merchantId,
    livemode: order.livemode,
    amount: order.amount,
    currency: order.currency,
    method,
    route: options.route ?? 'scripted_primary',
    submissionId: options.submissionId === undefined ? unique('sub_') : options.submissionId,
    clientAddress: options.clientAddress === undefined ? '127.0.0.1' : options.clientAddress,
    card: method === 'card' ? { brand: 'visa', last4: '4242' } : undefined,
    now: options.now ?? order.createdAt,
  });
  // As payment_attempts gives the leg back: its optional fields present, null when unset.
  return { ...started, leg: { ...started.leg, savedCardId: started.leg.savedCardId ?? null, challengeRedirect: started.leg.challengeRedirect ?? null } };
}

/** A pending refund of part of `order`'s payment. */
export function aRefund(order: Order, paymentId: string, overrides: Partial<Refund> = {}): Refund {
  return {
    id: unique(REFUND_ID_PREFIX),
    orderId: order.id,
    paymentId,
    merchantId: order.merchantId,
    livemode: order.livemode,
    reference: order.reference,
    amount: 500n,
    currency: order.currency,
    reason: 'requested_by_customer',
    note: '',
    status: 'pending',
    processorRef: null,
    failureCode: null,
    createdAt: new Date('2026-03-02T11:00:00.000Z'),
    ...overrides,
  };
}

/** An open dispute of `amount` of `order`'s payment. */
export function aDispute(order: Order, paymentId: string, overrides: Partial<Dispute> = {}): Dispute {
  const createdAt = overrides.createdAt ?? new Date('2026-03-03T10:00:00.000Z');
  return {
    id: unique('dp_'),
    orderId: order.id,
    paymentId,
    merchantId: order.merchantId,
    livemode: order.livemode,
    reference: order.reference,
    amount: order.amountCaptured ?? order.amount,
    currency: order.currency,
    reason: 'fraudulent',
    status: 'needs_response',
    evidenceDueBy: new Date(createdAt.getTime() + 7 * 24 * 3600_000),
    submittedEvidence: null,
    submissionCount: 0,
    withdrawn: { amount: order.amountCaptured ?? order.amount, currency: order.currency },
    fee: { amount: 1500n, currency: order.currency },
    withdrawnFrom: 'merchant_pending',
    source: 'test_helper',
    version: 1,
    createdAt,
    closedAt: null,
    ...overrides,
  };
}

/** The capture's ledger transaction of a payment of `order` that captured `captured`. */
export function aCapturePosting(order: Order, paymentId: string, captured = order.amount, settlementCurrency = 'EUR', at = new Date('2026-03-02T10:01:00.000Z')): LedgerTransaction {
  const money = { amount: captured, currency: order.currency };
  return capturePosting({
    paymentId,
    orderId: order.id,
    merchantId: order.merchantId,
    livemode: order.livemode,
    reference: order.reference,
    captured: money,
    settlement: settlementBreakdown(money, settlementCurrency),
    at,
  });
}

/** The ports the "given" helpers write through (the fakes' and Postgres's alike). */
export interface SeedPorts {
  readonly uow: UnitOfWork;
  readonly merchants: MerchantRepository;
  readonly orderCreation: OrderCreationStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
}

/** A stored merchant with a test secret key; `caller` is what that key resolves to. */
export async function givenMerchant(ports: SeedPorts, overrides: Partial<MerchantRecord> = {}): Promise<{ merchant: MerchantRecord; key: NewApiKey; caller: Caller }> {
  const merchant = aMerchant(overrides);
  const key = anApiKey();
  await ports.merchants.insertWithCredentials(merchant, [key], [], []);
  return { merchant, key, caller: { keyId: key.id, merchantId: merchant.id, livemode: false, keyKind: 'secret', checkoutHost: merchant.checkoutHost } };
}

/** A stored pending order of `merchant` (created now by the ports' clock unless told). */
export async function givenOrder(ports: SeedPorts, merchant: MerchantRecord, options: { command?: Partial<CreateOrderCommand>; livemode?: boolean } = {}): Promise<Order> {
  const { order, event } = anOrder(merchant, { ...options, now: ports.clock.now() });
  await ports.orderCreation.create(undefined, order, event);
  return asStored(order);
}

const eventIds = (ports: SeedPorts) => ({ eventId: ports.ids.newId(EVENT_ID_PREFIX), now: ports.clock.now() });

/**
 * A stored order paid by card on `route`: its payment captured (all of it), order.paid, and the
 * capture's ledger transaction, as the payment recorder writes them.
 */
export async function givenPaidOrder(
  ports: SeedPorts,
  merchant: MerchantRecord,
  options: { route?: string; command?: Partial<CreateOrderCommand>; method?: PaymentMethod } = {},
): Promise<{ order: Order; payment: PaymentRecord }> {
  const created = await givenOrder(ports, merchant, options);
  return ports.uow.run(async (tx) => {
    const now = ports.clock.now();
    const started = aCardPayment(created, { route: options.route, method: options.method, now });
    await tx.payments.start(started);
    const authorized = recordAuthorization(started, `${started.leg.route}_auth_${started.leg.id}`, now);
    await tx.payments.recordAuthorization(authorized);
    const captured = markCaptured(authorized, { processorRef: `${started.leg.route}_cap_${started.leg.id}`, amount: created.amount, capturedAt: now }, 'not_required', now);
    await tx.payments.markCaptured(captured);
    const money = { amount: created.amount, currency: created.currency };
    const settlement = settlementBreakdown(money, merchant.settlementCurrency);
    const t = markPaid(created, { method: captured.payment.method, settlement: settlement.net }, eventIds(ports));
    await tx.orders.saveTransition(t.order);
    await tx.outbox.append(t.event);
    await tx.ledger.post(aCapturePosting(created, captured.payment.id, created.amount, merchant.settlementCurrency, now));
    return { order: t.order, payment: (await tx.payments.listForOrder(created.id))[0]! };
  });
}

/** A stored manual-capture order whose card payment is authorized on `route` (nothing captured, nothing in the ledger). */
export async function givenAuthorizedOrder(
  ports: SeedPorts,
  merchant: MerchantRecord,
  options: { route?: string; command?: Partial<CreateOrderCommand> } = {},
): Promise<{ order: Order; payment: PaymentRecord }> {
  const created = await givenOrder(ports, merchant, { command: { captureMethod: 'manual', ...options.command } });
  return ports.uow.run(async (tx) => {
    const now = ports.clock.now();
    const started = aCardPayment(created, { route: options.route, now });
    await tx.payments.start(started);
    const authorized = recordAuthorization(started, `${started.leg.route}_auth_${started.leg.id}`, now);
    await tx.payments.recordAuthorization(authorized);
    await tx.payments.markAuthorized(markLegAuthorized(authorized, 'not_required', now));
    const t = markAuthorized(created, { method: 'card', expiresAt: authorizationExpiry(now) }, eventIds(ports));
    await tx.orders.saveTransition(t.order);
    await tx.outbox.append(t.event);
    return { order: t.order, payment: (await tx.payments.listForOrder(created.id))[0]! };
  });
}

/** An order.created-like event of `order` (another type or sequence when told), for outbox cases. */
export function anOrderEvent(order: Order, overrides: Partial<DomainEvent> = {}): DomainEvent {
  return { ...orderEvent(order, 'order.created', orderEventData(order), { eventId: unique(EVENT_ID_PREFIX), now: order.createdAt }), ...overrides };
}
