import type { ConnectRouter } from '@connectrpc/connect';
import type { Knex } from 'knex';
import { PostgresUnitOfWork } from '../kernel/adapters/postgres/postgres-unit-of-work.ts';
import { PostgresObjectModes } from '../kernel/adapters/postgres/postgres-object-modes.ts';
import { systemClock } from '../kernel/adapters/node/system-clock.ts';
import { cryptoIdGenerator } from '../kernel/adapters/node/crypto-id-generator.ts';
import { guardRequests } from '../kernel/application/request-guard.ts';
import { createIdempotent } from '../kernel/application/idempotent.ts';
import type { ConnectServiceEntry, GuardService, ModuleContext, ModuleManifest } from '../kernel/module-manifest.ts';
import type { Clock } from '../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../kernel/ports/id-generator.port.ts';
import type { KeyRing } from '../kernel/ports/key-ring.port.ts';
import type { Metrics } from '../kernel/ports/metrics.port.ts';
import { ERRORS, MODULES, OBJECT_TABLES, postgresScope } from './modules.ts';
import { ephemeralKeyRing } from './vault-keys.ts';
import { wireMerchant, type MerchantWiring } from '../modules/merchant/module.ts';
import type { CreateFirstSandboxUseCase, CreateSandboxUseCase } from '../modules/merchant/application/create-sandbox.ts';
import type { IssueApiKeysUseCase } from '../modules/merchant/application/issue-api-keys.ts';
import type { TestCardDirectory } from '../modules/payment/ports/test-card-directory.port.ts';
import type { RateLimitPolicy } from '../modules/merchant/adapters/postgres/postgres-rate-limiter.ts';
import type { AuthFailurePolicy } from '../modules/merchant/adapters/postgres/postgres-auth-failure-limiter.ts';
import type { MerchantRepository } from '../modules/merchant/ports/merchant-repository.port.ts';
import { orderStores, wireOrder } from '../modules/order/module.ts';
import { wirePayment } from '../modules/payment/module.ts';
import type { Payments } from '../modules/payment/application/payments.ts';
import type { SimulatedIssuerPages } from '../modules/payment/adapters/simulator/simulated-issuer-pages.ts';
import type { VelocityLimits } from '../modules/payment/domain/velocity.ts';
import { wireCheckout } from '../modules/checkout/module.ts';
import { createCaptureOrder, type CaptureOrder } from '../modules/capture/application/capture-order.ts';
import { createVoidOrder } from '../modules/void/application/void-order.ts';
import { wireRefund } from '../modules/refund/module.ts';
import type { RefundOrder } from '../modules/refund/application/refund-order.ts';
import { wireDispute } from '../modules/dispute/module.ts';
import type { SweepDisputes } from '../modules/dispute/application/sweep-disputes.ts';
import { wireLedger } from '../modules/ledger/module.ts';
import type { LedgerAudit } from '../modules/ledger/ports/ledger.port.ts';
import { wirePayout } from '../modules/payout/module.ts';
import type { PayoutRuns } from '../modules/payout/application/run-payouts.ts';
import { wireCustomer } from '../modules/customer/module.ts';
import type { RotateVaultKeys } from '../modules/customer/application/rotate-vault-keys.ts';
import { wireSubscription } from '../modules/subscription/module.ts';
import type { Billing } from '../modules/subscription/application/bill-subscriptions.ts';
import type { TestClockAdvances } from '../modules/subscription/application/advance-test-clocks.ts';
import { wirePaymentLink } from '../modules/payment-link/module.ts';
import type { LinkStartLimits } from '../modules/payment-link/application/start-link-payment.ts';
import { wireWebhook } from '../modules/webhook/module.ts';
import { createSigningSecrets } from '../modules/webhook/application/signing-secrets.ts';
import type { WebhookDeliveryQueue } from '../modules/webhook/ports/webhook-delivery-queue.port.ts';
import { wireEvent } from '../modules/event/module.ts';
import type { EventFeed } from '../modules/event/ports/event-subscription.port.ts';
import { wireTestHelpers } from '../modules/test-helpers/module.ts';

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

/** The core, wired: Connect routes for the gateway, and the operator's use cases. */
export interface Core {
  /** Registers every Connect service on a router (Fastify plugin or in-process transport). */
  readonly routes: (router: ConnectRouter) => void;
  readonly createSandbox: CreateSandboxUseCase;
  /** The first start's sandbox: test mode only, and only on a database with no merchant. */
  readonly createFirstSandbox: CreateFirstSandboxUseCase;
  /** A further key pair for a merchant (`checkout keys create`). */
  readonly issueApiKeys: IssueApiKeysUseCase;
  /** Merchants, their keys, and the test cards' directory. */
  readonly merchants: MerchantRepository & TestCardDirectory;
  /** The payment engine, for housekeeping (expiry) run by the host process. */
  readonly payments: Payments;
  /** The webhook delivery queue, which the dispatcher drains. */
  readonly webhookQueue: WebhookDeliveryQueue;
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
  /** The simulated routes' issuer page (test mode's 3-D Secure), served by the gateway. */
  readonly simulatedIssuer: SimulatedIssuerPages;
  /** Re-wraps the vault's data keys under the active KEK (`checkout keys rotate`). */
  readonly rotateVaultKeys: RotateVaultKeys;
  /** Subscriptions' charges, for the biller worker (and the tests). */
  readonly billing: Billing;
  /** Test clocks advancing in the background, stepped by the biller worker (and the tests). */
  readonly testClocks: TestClockAdvances;
}

/**
 * Composes the core from the modules' wirings (src/modules/<m>/module.ts), in the order their
 * use cases depend on each other: merchants (who every call authenticates) first, then the
 * vault and the payment engine, the modules built on the engine, and the rest. A module that
 * needs only the shared context is wired from its manifest in src/composition/modules.ts and
 * is not named here.
 */
export function createCore(options: CoreOptions): Core {
  const { knex, onInternalError } = options;
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? cryptoIdGenerator;
  const uow = new PostgresUnitOfWork(knex, postgresScope);
  const keyRing = options.keyRing ?? ephemeralKeyRing();
  // Webhook signing secrets are sealed under the vault's keys too (and re-wrapped by its rotation).
  const secrets = createSigningSecrets(keyRing);
  const merchant: MerchantWiring = wireMerchant({ knex, clock, ids, metrics: options.metrics }, { ...options, secrets });
  const context: ModuleContext = { knex, uow, clock, ids, idempotent: createIdempotent(uow), authenticate: merchant.authenticate, onInternalError, metrics: options.metrics };

  const orders = orderStores(knex);
  // The vault verifies cards on the payment engine's routes (read when it verifies one); the engine
  // saves a paying card through the vault's saving.
  const customer = wireCustomer(context, { keyRing, testCards: merchant.merchants, routesIn: (tx, scope) => payment.payments.parts.routes.routesIn(tx, scope.merchantId, scope.livemode) });
  const payment = wirePayment(context, { merchants: merchant.merchants, orders: orders.orders, vault: customer.vault, velocity: options.velocity });
  const { parts } = payment.payments;
  const captureOrder = createCaptureOrder(parts);
  const refund = wireRefund(context, { parts, payments: payment.reads });
  const dispute = wireDispute(context, { parts, orders: orders.orders, payments: payment.reads });
  const ledger = wireLedger(context);
  const payout = wirePayout(context, { ledger: ledger.audit, cutoffMinutesUtc: options.payoutCutoffMinutesUtc });
  const subscription = wireSubscription(context, { orderCreation: orders.creation, merchants: merchant.merchants, payments: payment.reads, vault: customer.vault, payOrderAt: payment.payOrderAt });
  const webhook = wireWebhook(context, { secrets, allowPrivateNetworks: options.webhookAllowPrivateNetworks });
  const services: ConnectServiceEntry[] = [
    ...wireOrder(context, {
      stores: orders,
      reads: { payments: payment.reads, refunds: refund.reads, disputes: dispute.reads },
      voidOrder: createVoidOrder(parts),
      captureOrder,
      expireOrder: payment.payments.expireOrder,
      prepareCharge: customer.prepareChargeWith(payment.payments.payOrder),
    }).services,
    ...wireCheckout(context, { payments: payment.payments, orders: orders.orders, cards: customer.cards, vault: customer.vault }).services,
    ...wireTestHelpers(context, { receiveTransfer: payment.payments.receiveTransfer, payouts: payout.payoutRuns, openDispute: dispute.openDispute }).services,
    ...webhook.services,
    ...wireEvent(context, { queue: webhook.queue, endpoints: webhook.endpoints, secrets, feed: options.eventFeed }).services,
    ...refund.services,
    ...payout.services,
    ...dispute.services,
    ...wirePaymentLink(context, { orderCreation: orders.creation, merchants: merchant.merchants, linkStarts: options.linkStarts }).services,
    ...customer.services,
    ...subscription.services,
  ];
  const manifests: readonly ModuleManifest[] = MODULES;
  for (const module of manifests) if (module.wire) services.push(...module.wire(context).services);

  const objectModes = new PostgresObjectModes(knex, OBJECT_TABLES);
  const newRequestId = () => ids.newId('req_');
  // Every request passes one check of its strings first, whichever transport brought it. The services
  // that take API keys judge the key before telling a malformed request why it is; a not-found answer
  // to a caller with a key says when the id is its merchant's in the other mode.
  const guard: GuardService = (service, impl, credentials) =>
    guardRequests(service, impl, onInternalError, newRequestId, credentials === 'none' ? undefined : (ctx) => merchant.authenticate(ctx, credentials), objectModes, ERRORS);
  return {
    routes: (router: ConnectRouter) => {
      for (const service of services) service.register(router, guard);
    },
    createSandbox: merchant.createSandbox,
    createFirstSandbox: merchant.createFirstSandbox,
    issueApiKeys: merchant.issueApiKeys,
    merchants: merchant.merchants,
    payments: payment.payments,
    webhookQueue: webhook.queue,
    ledger: ledger.audit,
    refunds: refund.refundOrder,
    payoutRuns: payout.payoutRuns,
    disputes: { sweep: dispute.sweep },
    captures: captureOrder,
    simulatedIssuer: payment.simulatedIssuer,
    rotateVaultKeys: customer.rotateVaultKeys,
    billing: subscription.billing,
    testClocks: subscription.testClocks,
  };
}
