import { PostgresSubscriptionReader } from '../modules/subscription/adapters/postgres/postgres-subscriptions.ts';
import { createBilling, type Billing } from '../modules/subscription/application/bill-subscriptions.ts';
import { createSubscriptionService, createTestClockService } from '../modules/subscription/application/subscription-service.ts';
import { createTestClockAdvances, type TestClockAdvances } from '../modules/subscription/application/advance-test-clocks.ts';
import { SubscriptionService, TestClockService } from '../gen/checkout/v1/subscription_pb.ts';
import { PostgresSettlement } from '../modules/payout/adapters/postgres/postgres-settlement.ts';
import { createSettleDue } from '../modules/payout/application/settle-due.ts';
import { createPayoutRuns, type PayoutRuns } from '../modules/payout/application/run-payouts.ts';
import { createPayoutService } from '../modules/payout/application/payout-service.ts';
import { PostgresPayoutBatcher, PostgresPayoutReader } from '../modules/payout/adapters/postgres/postgres-payouts.ts';
import { PayoutService } from '../gen/checkout/v1/payout_pb.ts';
import { createBalanceService } from '../modules/payout/application/balance-service.ts';
import { BalanceService } from '../gen/checkout/v1/balance_pb.ts';
import { PostgresRefundRepository } from '../modules/refund/adapters/postgres/postgres-refund-repository.ts';
import { createRefundOrder, type RefundOrder } from '../modules/refund/application/refund-order.ts';
import { createVoidOrder } from '../modules/void/application/void-order.ts';
import { createCaptureOrder, type CaptureOrder } from '../modules/capture/application/capture-order.ts';
import { createRefundService } from '../modules/refund/application/refund-service.ts';
import { RefundService } from '../gen/checkout/v1/refund_pb.ts';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { DescService } from '@bufbuild/protobuf';
import { PostgresDisputeRepository } from '../modules/dispute/adapters/postgres/postgres-dispute-repository.ts';
import { PostgresEvidenceRepository } from '../modules/dispute/adapters/postgres/postgres-evidence-repository.ts';
import { createOpenDispute } from '../modules/dispute/application/open-dispute.ts';
import { createSweepDisputes, type SweepDisputes } from '../modules/dispute/application/sweep-disputes.ts';
import { createDisputeService } from '../modules/dispute/application/dispute-service.ts';
import { DisputeService } from '../gen/checkout/v1/dispute_pb.ts';
import { PaymentLinkPageService, PaymentLinkService } from '../gen/checkout/v1/payment_link_pb.ts';
import { PostgresPaymentLinkRepository } from '../modules/payment-link/adapters/postgres/postgres-payment-link-repository.ts';
import { createCreatePaymentLink } from '../modules/payment-link/application/create-payment-link.ts';
import { createDeactivatePaymentLink } from '../modules/payment-link/application/deactivate-payment-link.ts';
import { createOpenPaymentLink } from '../modules/payment-link/application/open-payment-link.ts';
import { createStartLinkPayment, DEFAULT_LINK_START_LIMITS, type LinkStartBucket, type LinkStartLimits } from '../modules/payment-link/application/start-link-payment.ts';
import { createPaymentLinkService } from '../modules/payment-link/application/payment-link-service.ts';
import { createPaymentLinkPageService } from '../modules/payment-link/application/payment-link-page-service.ts';
import { EVENT_ID_PREFIX } from '../modules/event/domain/domain-event.ts';
import { PostgresLedgerAudit } from '../modules/ledger/adapters/postgres/postgres-ledger.ts';
import type { LedgerAudit } from '../modules/ledger/ports/ledger.port.ts';
import type { ConnectRouter } from '@connectrpc/connect';
import type { Knex } from 'knex';
import { OrderService } from '../gen/checkout/v1/order_pb.ts';
import { CheckoutService } from '../gen/checkout/v1/checkout_pb.ts';
import { TestHelperService } from '../gen/checkout/v1/test_helpers_pb.ts';
import { EventService, WebhookEndpointService } from '../gen/checkout/v1/webhook_pb.ts';
import { createEventService } from '../modules/event/application/event-service.ts';
import { createWebhookEndpointService } from '../modules/webhook/application/webhook-endpoint-service.ts';
import { PostgresEventLog } from '../modules/event/adapters/postgres/postgres-event-log.ts';
import { PostgresWebhookDeliveryQueue } from '../modules/webhook/adapters/postgres/postgres-webhook-delivery-queue.ts';
import { PostgresWebhookEndpointRepository } from '../modules/webhook/adapters/postgres/postgres-webhook-endpoint-repository.ts';
import { createAddressPolicy } from '../modules/webhook/adapters/http/address-policy.ts';
import { ServiceUnavailableError } from '../kernel/ports/errors.ts';
import type { EventFeed } from '../modules/event/ports/event-subscription.port.ts';
import { createAuthenticate } from '../modules/merchant/application/authenticate.ts';
import { guardRequests } from '../kernel/application/request-guard.ts';
import { createIdempotent } from '../kernel/application/idempotent.ts';
import { createCreateOrder } from '../modules/order/application/create-order.ts';
import { createCreateFirstSandbox, createCreateSandbox, type CreateFirstSandboxUseCase, type CreateSandboxUseCase } from '../modules/merchant/application/create-sandbox.ts';
import { createIssueApiKeys, type IssueApiKeysUseCase } from '../modules/merchant/application/issue-api-keys.ts';
import { createGetOrder } from '../modules/order/application/get-order.ts';
import { createListOrders } from '../modules/order/application/list-orders.ts';
import { createOrderService } from '../modules/order/application/order-service.ts';
import { createTestHelperService } from '../modules/test-helpers/application/test-helper-service.ts';
import { createCheckoutService } from '../modules/checkout/application/checkout-service.ts';
import { createPayments, type Payments } from '../modules/payment/application/payments.ts';
import { createCheckoutCards } from '../modules/checkout/application/checkout-cards.ts';
import { createGetCheckout } from '../modules/checkout/application/get-checkout.ts';
import { PostgresMerchantRepository } from '../modules/merchant/adapters/postgres/postgres-merchant-repository.ts';
import { PostgresRateLimiter, type RateLimitPolicy } from '../modules/merchant/adapters/postgres/postgres-rate-limiter.ts';
import { PostgresAuthFailureLimiter, type AuthFailurePolicy } from '../modules/merchant/adapters/postgres/postgres-auth-failure-limiter.ts';
import { PostgresOrderRepository } from '../modules/order/adapters/postgres/postgres-order-repository.ts';
import { PostgresPaymentRepository } from '../modules/payment/adapters/postgres/postgres-payment-repository.ts';
import { PostgresUnitOfWork } from '../kernel/adapters/postgres/postgres-unit-of-work.ts';
import { PostgresObjectModes } from '../kernel/adapters/postgres/postgres-object-modes.ts';
import { PostgresOrderCreationStore } from '../modules/order/adapters/postgres/postgres-order-creation-store.ts';
import { SimulatedAlphaAcquirer } from '../modules/payment/adapters/simulator/simulated-alpha/simulated-alpha-acquirer.ts';
import { SimulatedBetaAcquirer } from '../modules/payment/adapters/simulator/simulated-beta/simulated-beta-acquirer.ts';
import { systemClock } from '../kernel/adapters/node/system-clock.ts';
import { cryptoIdGenerator } from '../kernel/adapters/node/crypto-id-generator.ts';
import type { Clock } from '../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../kernel/ports/id-generator.port.ts';
import { DEFAULT_VELOCITY_LIMITS, type VelocityLimits } from '../modules/payment/domain/velocity.ts';
import { PostgresCustomerRepository } from '../modules/customer/adapters/postgres/postgres-customer-repository.ts';
import { PostgresCardVault, PostgresVaultKeys } from '../modules/customer/adapters/postgres/postgres-card-vault.ts';
import { createCardVaultUseCases } from '../modules/customer/application/card-vault-use-cases.ts';
import { createPrepareOrderCharge } from '../modules/customer/application/charge-saved-card.ts';
import { createRotateVaultKeys, type RotateVaultKeys } from '../modules/customer/application/rotate-vault-keys.ts';
import { createCustomerService } from '../modules/customer/application/customer-service.ts';
import { CustomerService } from '../gen/checkout/v1/customer_pb.ts';
import type { KeyRing } from '../kernel/ports/key-ring.port.ts';
import { ephemeralKeyRing } from './vault-keys.ts';
import { createSigningSecrets } from '../modules/webhook/application/signing-secrets.ts';
import type { Metrics } from '../kernel/ports/metrics.port.ts';

/** What the core needs from its host process. */
export interface CoreOptions {
  readonly knex: Knex;
  readonly apiBaseUrl: string;
  readonly checkoutHost: string;
  /** A fault of ours (logged; the client gets internal_error), with the request id it was answered under when there is one. */
  readonly onInternalError: (err: unknown, requestId?: string) => void;
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** Live tail of events for `checkout listen`; without it ListenEvents answers unavailable. */
  readonly eventFeed?: EventFeed;
  /** Whether endpoint URLs may name loopback and private addresses (WEBHOOK_ALLOW_PRIVATE_NETWORKS); off by default. */
  readonly webhookAllowPrivateNetworks?: boolean;
  /** Card-testing limits of the checkout (DEFAULT_VELOCITY_LIMITS when absent). */
  readonly velocity?: VelocityLimits;
  /** API rate limit per key; none when absent or when perSecond is 0. */
  readonly rateLimit?: RateLimitPolicy;
  /** How many orders customers may start on payment links, per client address and per link (DEFAULT_LINK_START_LIMITS when absent). */
  readonly linkStarts?: LinkStartLimits;
  /** Failed authentications allowed per client address and window; none when absent or when limit is 0. */
  readonly authFailures?: AuthFailurePolicy;
  /** The daily payout cut-off, minutes after midnight UTC (midnight when absent). */
  readonly payoutCutoffMinutesUtc?: number;
  /** The card vault's keys (loadKeyRing); a process-lifetime key, test mode only, when absent. */
  readonly keyRing?: KeyRing;
  /** Where payment outcomes and rate-limit refusals are counted; nothing is counted when absent. */
  readonly metrics?: Metrics;
}

const NO_FEED: EventFeed = {
  tail: async () => {
    throw new ServiceUnavailableError('The event feed is not connected (NATS unreachable).');
  },
};

/** The core, wired: Connect routes for the gateway, and the operator's use cases. */
export interface Core {
  /** Registers every Connect service on a router (Fastify plugin or in-process transport). */
  readonly routes: (router: ConnectRouter) => void;
  readonly createSandbox: CreateSandboxUseCase;
  /** The first start's sandbox: test mode only, and only on a database with no merchant. */
  readonly createFirstSandbox: CreateFirstSandboxUseCase;
  /** A further key pair for a merchant (`checkout keys create`). */
  readonly issueApiKeys: IssueApiKeysUseCase;
  readonly merchants: PostgresMerchantRepository;
  /** The payment engine, for housekeeping (expiry) run by the host process. */
  readonly payments: Payments;
  /** The webhook delivery queue, which the dispatcher drains. */
  readonly webhookQueue: PostgresWebhookDeliveryQueue;
  /** Balances and the ledger's invariants (`checkout ledger verify`). */
  readonly ledger: LedgerAudit;
  /** Refunds, for housekeeping (refunds a stopped process left pending) run by the sweeper. */
  readonly refunds: Pick<RefundOrder, 'settleStale'>;
  /** Settlement and payout runs, for the settler worker. */
  readonly payoutRuns: PayoutRuns;
  /** Disputes, for housekeeping run by the sweeper: the dispute test card's disputes, overdue and decided ones. */
  readonly disputes: { readonly sweep: SweepDisputes };
  /** Captures a stopped process left between the acquirer and the record, for the sweeper. */
  readonly captures: Pick<CaptureOrder, 'completeStale'>;
  /** Re-wraps the vault's data keys under the active KEK (`checkout keys rotate`). */
  readonly rotateVaultKeys: RotateVaultKeys;
  /** Subscriptions' charges, for the biller worker (and the tests). */
  readonly billing: Billing;
  /** Test clocks advancing in the background, stepped by the biller worker (and the tests). */
  readonly testClocks: TestClockAdvances;
}

/** Composes the core's use cases over the Postgres adapters and the simulated acquirers. */
export function createCore(options: CoreOptions): Core {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? cryptoIdGenerator;
  const merchants = new PostgresMerchantRepository(options.knex);
  const orders = new PostgresOrderRepository(options.knex);
  const paymentStore = new PostgresPaymentRepository(options.knex);
  const uow = new PostgresUnitOfWork(options.knex);
  const limiter = options.rateLimit && options.rateLimit.perSecond > 0 ? new PostgresRateLimiter(options.knex, options.rateLimit) : undefined;
  const linkStarts = options.linkStarts ?? DEFAULT_LINK_START_LIMITS;
  /** A bucket shared by every instance, or none when the limit is switched off (a burst or rate of 0). */
  const bucket = (policy: LinkStartBucket) => (policy.burst > 0 && policy.perSecond > 0 ? new PostgresRateLimiter(options.knex, policy) : undefined);
  const failures = options.authFailures && options.authFailures.limit > 0 ? { limiter: new PostgresAuthFailureLimiter(options.knex, options.authFailures), clock } : undefined;
  const authenticate = createAuthenticate({ keys: merchants, limiter, failures, metrics: options.metrics });
  const refundStore = new PostgresRefundRepository(options.knex);
  const disputeStore = new PostgresDisputeRepository(options.knex);
  const evidenceStore = new PostgresEvidenceRepository(options.knex);
  const getOrder = createGetOrder({ orders, payments: paymentStore, refunds: refundStore, disputes: disputeStore });
  const keyRing = options.keyRing ?? ephemeralKeyRing();
  // Webhook signing secrets are sealed under the vault's keys too (and re-wrapped by its rotation).
  const signingSecrets = createSigningSecrets(keyRing);
  const cardReads = new PostgresCardVault(options.knex);
  // The vault verifies cards on the payment engine's routes (read when it verifies one); the engine
  // saves a paying card through the vault's saving.
  const vault = createCardVaultUseCases({
    keys: keyRing,
    reads: cardReads,
    routesIn: (tx, scope) => payments.parts.routes.routesIn(tx, scope.merchantId, scope.livemode),
    testCards: merchants,
    onBackgroundError: options.onInternalError,
    ids,
    clock,
  });
  const paymentDeps = {
    uow,
    reads: { orders, payments: paymentStore },
    ids,
    clock,
    merchants,
    testCards: merchants,
    // Test mode's default routes, in order: simulated_alpha, then simulated_beta on a soft decline. No live processor yet.
    processors: { test: [new SimulatedAlphaAcquirer(merchants), new SimulatedBetaAcquirer(merchants)], live: [] },
    velocity: options.velocity ?? DEFAULT_VELOCITY_LIMITS,
    onBackgroundError: options.onInternalError,
    metrics: options.metrics,
    cardSaving: vault.saving,
  };
  const payments = createPayments(paymentDeps);
  // The payment engine at another clock's time: a test clock's, for the subscriptions on it.
  const payOrderAt = (at: Clock) => (at === clock ? payments.payOrder : createPayments({ ...paymentDeps, clock: at }).payOrder);
  const onInternalError = options.onInternalError;
  const newRequestId = () => ids.newId('req_');
  const objectModes = new PostgresObjectModes(options.knex);
  const idempotent = createIdempotent(uow);
  const captureOrder = createCaptureOrder(payments.parts);
  const orderCreation = new PostgresOrderCreationStore(options.knex);
  const customers = new PostgresCustomerRepository(options.knex);
  const customerService = createCustomerService({ authenticate, idempotent, customers, cards: cardReads, vault, ids, clock });
  const subscriptionReader = new PostgresSubscriptionReader(options.knex);
  const billing = createBilling({
    uow,
    subscriptions: subscriptionReader,
    orderStore: orderCreation,
    merchants,
    payments: paymentStore,
    vault,
    payOrderAt,
    ids,
    clock,
    onBackgroundError: options.onInternalError,
  });
  const subscriptionDeps = { authenticate, idempotent, uow, subscriptions: subscriptionReader, billing, ids, clock };
  const testClocks = createTestClockAdvances({ uow, subscriptions: subscriptionReader, billing, ids, clock, onBackgroundError: options.onInternalError });
  const orderService = createOrderService({
    authenticate,
    createOrder: createCreateOrder({ store: orderCreation, ids, clock }),
    getOrder,
    listOrders: createListOrders({ orders, payments: paymentStore, refunds: refundStore, disputes: disputeStore }),
    voidOrder: createVoidOrder(payments.parts),
    captureOrder,
    expireOrder: payments.expireOrder,
    idempotent,
    prepareCharge: createPrepareOrderCharge({ customers, vault, payOrder: payments.payOrder }),
  });
  const checkoutCards = createCheckoutCards({ cards: cardReads, useCases: vault });
  const checkoutService = createCheckoutService({
    getCheckout: createGetCheckout({ ...payments.parts, cards: checkoutCards }),
    payOrder: payments.payOrder,
    authenticatePayment: payments.authenticate,
    cards: checkoutCards,
    orders,
    clock,
    authenticate,
  });
  const settleDue = createSettleDue({ settlement: new PostgresSettlement(options.knex), clock });
  const ledgerAudit = new PostgresLedgerAudit(options.knex);
  const payoutReader = new PostgresPayoutReader(options.knex);
  const payoutRuns = createPayoutRuns({
    uow,
    batcher: new PostgresPayoutBatcher(options.knex),
    reader: payoutReader,
    settleDue,
    clock,
    ids,
    cutoffMinutesUtc: options.payoutCutoffMinutesUtc ?? 0,
  });
  const payoutService = createPayoutService({ authenticate, payouts: payoutReader });
  const openDispute = createOpenDispute(payments.parts);
  const sweepDisputes = createSweepDisputes(payments.parts, { disputes: disputeStore }, openDispute);
  const disputeService = createDisputeService({
    authenticate,
    idempotent,
    reads: { disputes: disputeStore, evidence: evidenceStore, orders, payments: paymentStore },
    clock,
    eventIds: () => ({ eventId: ids.newId(EVENT_ID_PREFIX), now: clock.now() }),
  });
  const testHelperService = createTestHelperService({ authenticate, receiveTransfer: payments.receiveTransfer, idempotent, payouts: payoutRuns, openDispute });
  const balanceService = createBalanceService({ authenticate, ledger: ledgerAudit });
  const refundOrder = createRefundOrder(payments.parts, { refunds: refundStore });
  const refundService = createRefundService({ authenticate, idempotent, refunds: refundOrder, payments: paymentStore });
  const linkStore = new PostgresPaymentLinkRepository(options.knex);
  const paymentLinkService = createPaymentLinkService({
    authenticate,
    idempotent,
    links: linkStore,
    createLink: createCreatePaymentLink({ ids, clock }),
    deactivateLink: createDeactivatePaymentLink({ eventIds: () => ({ eventId: ids.newId(EVENT_ID_PREFIX), now: clock.now() }) }),
    clock,
  });
  const paymentLinkPageService = createPaymentLinkPageService({
    open: createOpenPaymentLink({ links: linkStore, merchants, clock }),
    start: createStartLinkPayment({
      links: linkStore,
      merchants,
      store: orderCreation,
      ids,
      clock,
      limiters: { perClientAddress: bucket(linkStarts.perClientAddress), perLink: bucket(linkStarts.perLink) },
      metrics: options.metrics,
    }),
  });
  const webhookQueue = new PostgresWebhookDeliveryQueue(options.knex);
  const endpoints = new PostgresWebhookEndpointRepository(options.knex);
  const addressPolicy = createAddressPolicy({ allowPrivateNetworks: options.webhookAllowPrivateNetworks ?? false });
  const endpointService = createWebhookEndpointService({ authenticate, endpoints, ids, clock, addressPolicy, idempotent, secrets: signingSecrets });
  const eventService = createEventService({
    authenticate,
    idempotent,
    events: new PostgresEventLog(options.knex),
    queue: webhookQueue,
    endpoints,
    secrets: signingSecrets,
    feed: options.eventFeed ?? NO_FEED,
    clock,
  });
  return {
    routes: (router) => {
      // Every request passes one check of its strings first, whichever transport brought it.
      // The services that take API keys judge the key before telling a malformed request why it is.
      const secretKey = (ctx: HandlerContext) => authenticate(ctx, 'secret');
      // A not-found answer to a caller with a key says when the id is its merchant's in the other mode.
      const guard = <S extends DescService>(service: S, impl: ServiceImpl<S>, credentialsFirst?: (ctx: HandlerContext) => Promise<unknown>) =>
        guardRequests(service, impl, onInternalError, newRequestId, credentialsFirst, objectModes);
      router.service(OrderService, guard(OrderService, orderService, secretKey));
      router.service(CheckoutService, guard(CheckoutService, checkoutService));
      router.service(TestHelperService, guard(TestHelperService, testHelperService, secretKey));
      router.service(WebhookEndpointService, guard(WebhookEndpointService, endpointService, secretKey));
      router.service(EventService, guard(EventService, eventService, secretKey));
      router.service(RefundService, guard(RefundService, refundService, secretKey));
      router.service(BalanceService, guard(BalanceService, balanceService, secretKey));
      router.service(PayoutService, guard(PayoutService, payoutService, secretKey));
      router.service(DisputeService, guard(DisputeService, disputeService, secretKey));
      router.service(PaymentLinkService, guard(PaymentLinkService, paymentLinkService, secretKey));
      // No key: the link's suffix is the credential, as the checkout id is for CheckoutService.
      router.service(PaymentLinkPageService, guard(PaymentLinkPageService, paymentLinkPageService));
      // CreateCardToken takes a publishable key; the service judges each call's key itself.
      router.service(CustomerService, guard(CustomerService, customerService, (ctx) => authenticate(ctx, 'publishable')));
      router.service(SubscriptionService, guard(SubscriptionService, createSubscriptionService(subscriptionDeps), secretKey));
      router.service(TestClockService, guard(TestClockService, createTestClockService(subscriptionDeps), secretKey));
    },
    createSandbox: createCreateSandbox({ merchants, ids, clock, apiBaseUrl: options.apiBaseUrl, checkoutHost: options.checkoutHost, secrets: signingSecrets }),
    createFirstSandbox: createCreateFirstSandbox({ merchants, ids, clock, apiBaseUrl: options.apiBaseUrl, checkoutHost: options.checkoutHost, secrets: signingSecrets }),
    issueApiKeys: createIssueApiKeys({ merchants, ids, clock }),
    merchants,
    payments,
    webhookQueue,
    ledger: ledgerAudit,
    refunds: refundOrder,
    payoutRuns,
    disputes: { sweep: sweepDisputes },
    captures: captureOrder,
    rotateVaultKeys: createRotateVaultKeys({ keys: keyRing, store: new PostgresVaultKeys(options.knex) }),
    billing,
    testClocks,
  };
}
