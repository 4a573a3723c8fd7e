import type { EventOutbox } from '../../modules/event/ports/event-outbox.port.ts';
import type { RequestLedger } from './idempotency-store.port.ts';
import type { WebhookDeliveryQueue } from '../../modules/webhook/ports/webhook-delivery-queue.port.ts';
import type { WebhookEndpointRepository } from '../../modules/webhook/ports/webhook-endpoint-repository.port.ts';
import type { MerchantReader } from '../../modules/merchant/ports/merchant-repository.port.ts';
import type { OrderRepository } from '../../modules/order/ports/order-repository.port.ts';
import type { PaymentRepository } from '../../modules/payment/ports/payment-repository.port.ts';
import type { PaymentRouteRepository } from '../../modules/payment/ports/payment-route-repository.port.ts';
import type { LedgerJournal } from '../../modules/ledger/ports/ledger.port.ts';
import type { RefundRepository } from '../../modules/refund/ports/refund-repository.port.ts';
import type { PayoutRepository } from '../../modules/payout/ports/payout-repository.port.ts';
import type { CaptureRequests } from '../../modules/capture/ports/capture-request.port.ts';
import type { SubscriptionRepository, TestClockRepository } from '../../modules/subscription/ports/subscription-repository.port.ts';
import type { DisputeRepository } from '../../modules/dispute/ports/dispute-repository.port.ts';
import type { EvidenceRepository } from '../../modules/dispute/ports/evidence-repository.port.ts';
import type { PaymentLinkRepository } from '../../modules/payment-link/ports/payment-link-repository.port.ts';
import type { CustomerRepository } from '../../modules/customer/ports/customer-repository.port.ts';
import type { CardVault } from '../../modules/customer/ports/card-vault.port.ts';

/**
 * The repositories bound to one transaction: what a use case changes, and
 * the outbox its events go to, commit together or not at all. A concept that
 * comes with the next capabilities (refunds, payouts) adds its repository here.
 */
export interface TransactionScope {
  readonly orders: OrderRepository;
  readonly payments: PaymentRepository;
  /** Each merchant's ordered processor routes per mode, read when a payment starts. */
  readonly paymentRoutes: PaymentRouteRepository;
  readonly refunds: RefundRepository;
  readonly payouts: PayoutRepository;
  /** Captures asked of the acquirer and not yet recorded. */
  readonly captures: CaptureRequests;
  readonly subscriptions: SubscriptionRepository;
  readonly testClocks: TestClockRepository;
  readonly disputes: DisputeRepository;
  /** The merchant's evidence of each order. */
  readonly evidence: EvidenceRepository;
  /** Payment links: locked by a payment that starts on one of their orders, counted when it is paid. */
  readonly links: PaymentLinkRepository;
  readonly customers: CustomerRepository;
  /** Vaulted cards, card tokens and fingerprint secrets, sealed. */
  readonly vault: CardVault;
  readonly merchants: MerchantReader;
  readonly endpoints: WebhookEndpointRepository;
  readonly deliveries: WebhookDeliveryQueue;
  /** Idempotency keys, claimed and completed in the transaction of the work they guard. */
  readonly requests: RequestLedger;
  /** The money each change moves, posted with the change. */
  readonly ledger: LedgerJournal;
  readonly outbox: EventOutbox;
}

/**
 * Schedules work to run once the transaction has committed (never when it
 * rolled back): releasing an authorization at its acquirer, say. The call
 * answers after its tasks have run; a task handles its own failures (the
 * state it follows is committed already).
 */
export type AfterCommit = (task: () => Promise<void>) => void;

/** Runs work in one database transaction: all of it commits, or none; its after-commit tasks run once it has. */
export interface UnitOfWork {
  run<T>(work: (tx: TransactionScope, afterCommit: AfterCommit) => Promise<T>): Promise<T>;
  /**
   * Runs one repository call that is atomic on its own (a single statement, as each PaymentRepository
   * change is) without a transaction around it: no BEGIN and COMMIT, two round trips fewer. Anything
   * that makes two calls, or reads then writes, belongs in run().
   */
  runAlone<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T>;
}
