import { AsyncLocalStorage } from 'node:async_hooks';
import type { AfterCommit, TransactionScope, UnitOfWork } from '../../../src/kernel/ports/unit-of-work.port.ts';
import { MemoryCaptureRequests } from './memory-capture-requests.ts';
import { MemoryDisputeRepository } from './memory-dispute-repository.ts';
import { MemoryEventOutbox } from './memory-event-outbox.ts';
import { MemoryLedgerJournal } from './memory-ledger-journal.ts';
import { MemoryMerchantReader } from './memory-merchant-repository.ts';
import { MemoryOrderRepository } from './memory-order-repository.ts';
import { MemoryPaymentRepository } from './memory-payment-repository.ts';
import { MemoryPaymentRouteRepository } from './memory-payment-route-repository.ts';
import { MemoryRefundRepository } from './memory-refund-repository.ts';
import { MemoryRequestLedger } from './memory-request-ledger.ts';
import { applyChanges, copyTables, notFaked, type MemoryTables, type TablesRef } from './memory-tables.ts';

/** A repository the fakes do not model yet: any call says so (notFaked). */
function unmodelled<T extends object>(port: string): T {
  return new Proxy({} as T, {
    get: (_target, method) => (typeof method === 'string' && method !== 'then' ? () => notFaked(port, method) : undefined),
  });
}

/** The repositories of one scope, on the tables `ref` gives. */
export function memoryScope(ref: TablesRef): TransactionScope {
  return {
    orders: new MemoryOrderRepository(ref),
    payments: new MemoryPaymentRepository(ref),
    paymentRoutes: new MemoryPaymentRouteRepository(ref),
    refunds: new MemoryRefundRepository(ref),
    payouts: unmodelled('PayoutRepository'),
    captures: new MemoryCaptureRequests(ref),
    subscriptions: unmodelled('SubscriptionRepository'),
    testClocks: unmodelled('TestClockRepository'),
    disputes: new MemoryDisputeRepository(ref),
    evidence: unmodelled('EvidenceRepository'),
    links: unmodelled('PaymentLinkRepository'),
    customers: unmodelled('CustomerRepository'),
    vault: unmodelled('CardVault'),
    merchants: new MemoryMerchantReader(ref),
    endpoints: unmodelled('WebhookEndpointRepository'),
    deliveries: unmodelled('WebhookDeliveryQueue'),
    requests: new MemoryRequestLedger(ref),
    ledger: new MemoryLedgerJournal(ref),
    outbox: new MemoryEventOutbox(ref),
  };
}

/** The committed tables of a fake world. */
export interface MemoryDatabase {
  /** The committed tables (read them in assertions; write them only through the ports). */
  readonly tables: MemoryTables;
}

/**
 * UnitOfWork in memory with all-or-nothing semantics: run() works on a copy-on-write snapshot of the
 * committed tables, whose written rows are applied to the committed tables when the work returns, and
 * which is dropped when it throws; after-commit tasks run only after a commit. Transactions run one at a time (a queue), which
 * is what the row locks of the Postgres adapter come to for the use cases; a run() inside a run()
 * would wait for itself, so it is refused with an error that says so.
 */
export class MemoryUnitOfWork implements UnitOfWork {
  readonly #db: MemoryDatabase;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #inside = new AsyncLocalStorage<true>();

  constructor(db: MemoryDatabase) {
    this.#db = db;
  }

  async run<T>(work: (tx: TransactionScope, afterCommit: AfterCommit) => Promise<T>): Promise<T> {
    if (this.#inside.getStore()) throw new Error('MemoryUnitOfWork.run() inside run(): a use case opened a second transaction while holding one');
    const turn = this.#queue.then(() => this.#transaction(work));
    this.#queue = turn.catch(() => undefined);
    const { result, tasks } = await turn;
    // Committed: what waited for it runs now, outside the queue (a task may open a transaction of its own).
    await Promise.all(tasks.map((task) => task()));
    return result;
  }

  async #transaction<T>(work: (tx: TransactionScope, afterCommit: AfterCommit) => Promise<T>): Promise<{ result: T; tasks: (() => Promise<void>)[] }> {
    const start = copyTables(this.#db.tables);
    const snapshot = copyTables(start);
    const tasks: (() => Promise<void>)[] = [];
    const result = await this.#inside.run(true, () => work(memoryScope(() => snapshot), (task) => tasks.push(task)));
    // Commit: the rows this transaction wrote become the committed ones (a throw above dropped them).
    applyChanges(this.#db.tables, start, snapshot);
    return { result, tasks };
  }

  runAlone<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T> {
    if (this.#inside.getStore()) return Promise.reject(new Error('MemoryUnitOfWork.runAlone() inside run(): a use case wrote outside the transaction it holds'));
    // Each repository call is atomic on its own: it writes the committed tables directly, after the queued transactions.
    const turn = this.#queue.then(() => work(memoryScope(() => this.#db.tables)));
    this.#queue = turn.catch(() => undefined);
    return turn;
  }
}
