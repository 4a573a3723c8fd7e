// The rows the in-memory fakes keep, one Map per table. Every value is an immutable domain object that
// a write replaces whole, so a transaction's snapshot is a copy of the Maps only (copy-on-write): what
// a unit of work changes lands in its copy, and the copy becomes the committed tables, or is dropped.
import type { DomainEvent } from '../../../src/modules/event/domain/domain-event.ts';
import type { Dispute } from '../../../src/modules/dispute/domain/dispute.entity.ts';
import type { LedgerTransaction } from '../../../src/modules/ledger/domain/ledger.ts';
import type { KeyKind } from '../../../src/kernel/domain/caller.ts';
import type { Order } from '../../../src/modules/order/domain/order.entity.ts';
import type { PaymentAttempt } from '../../../src/modules/payment/domain/payment-attempt.entity.ts';
import type { Payment } from '../../../src/modules/payment/domain/payment.entity.ts';
import type { TestCardBehaviour } from '../../../src/modules/payment/domain/test-card.ts';
import type { Refund } from '../../../src/modules/refund/domain/refund.entity.ts';
import type { PaymentRoute } from '../../../src/modules/payment/domain/routing.ts';
import type { CaptureRequest } from '../../../src/modules/capture/ports/capture-request.port.ts';
import type { MerchantRecord } from '../../../src/modules/merchant/ports/merchant-repository.port.ts';

/** An order row: the order and what the orders table keeps beside it. */
export interface OrderRow {
  readonly order: Order;
  /** What pending refunds hold reserved (orders.amount_refund_pending). */
  readonly refundPending: bigint;
  /** What open and lost disputes hold (orders.amount_disputed). */
  readonly disputed: bigint;
}

/** An API key row: the key is kept by its SHA-256, as the real table keeps it. */
export interface ApiKeyRow {
  readonly id: string;
  readonly merchantId: string;
  readonly kind: KeyKind;
  readonly livemode: boolean;
  readonly keyHash: string;
  readonly revoked: boolean;
}

/** An idempotency key row (orders' and every other operation's, one key space per merchant and mode). */
export interface IdempotencyRow {
  readonly operation: string;
  readonly fingerprint: string;
  readonly status: 'in_progress' | 'completed';
  /** The stored response as JSON text, as the jsonb column round-trips it; null until completed (and for order creation's keys). */
  readonly response: string | null;
  /** Order creation's keys: the order as created. */
  readonly order?: Order;
}

/** An outbox row: the event, in the order appended, and whether the relay published it. */
export interface EventRow {
  readonly event: DomainEvent;
  readonly seq: number;
  readonly published: boolean;
}

/** Every table the fakes keep. */
export interface MemoryTables {
  merchants: Map<string, MerchantRecord>;
  apiKeys: Map<string, ApiKeyRow>;
  /** By `${merchantId}:${numberHash}`. */
  testCards: Map<string, TestCardBehaviour>;
  orders: Map<string, OrderRow>;
  payments: Map<string, Payment>;
  attempts: Map<string, PaymentAttempt>;
  refunds: Map<string, Refund & { readonly updatedAt: Date }>;
  captures: Map<string, CaptureRequest>;
  disputes: Map<string, Dispute>;
  /** By `${merchantId}:${livemode}:${key}`. */
  idempotency: Map<string, IdempotencyRow>;
  ledger: Map<string, LedgerTransaction>;
  events: Map<string, EventRow>;
  /** A merchant's routes in a mode, first to last, by `${merchantId}:${livemode}`. */
  paymentRoutes: Map<string, readonly PaymentRoute[]>;
}

/** Empty tables. */
export function emptyTables(): MemoryTables {
  return {
    merchants: new Map(),
    apiKeys: new Map(),
    testCards: new Map(),
    orders: new Map(),
    payments: new Map(),
    attempts: new Map(),
    refunds: new Map(),
    captures: new Map(),
    disputes: new Map(),
    idempotency: new Map(),
    ledger: new Map(),
    events: new Map(),
    paymentRoutes: new Map(),
  };
}

/** A snapshot of the tables: new Maps over the same (immutable) rows. */
export function copyTables(tables: MemoryTables): MemoryTables {
  const copy = {} as Record<string, Map<string, unknown>>;
  for (const [name, rows] of Object.entries(tables) as [string, Map<string, unknown>][]) copy[name] = new Map(rows);
  return copy as unknown as MemoryTables;
}

/**
 * Applies to `target` what `changed` did since `start` (both snapshots of it): every row written
 * (a new object: rows are replaced, never mutated) or deleted. Rows written meanwhile outside the
 * transaction (a runAlone, the relay) are kept unless the transaction wrote the same row.
 */
export function applyChanges(target: MemoryTables, start: MemoryTables, changed: MemoryTables): void {
  for (const name of Object.keys(target) as (keyof MemoryTables)[]) {
    const before = start[name] as Map<string, unknown>;
    const after = changed[name] as Map<string, unknown>;
    const rows = target[name] as Map<string, unknown>;
    for (const [key, row] of after) if (before.get(key) !== row) rows.set(key, row);
    for (const key of before.keys()) if (!after.has(key)) rows.delete(key);
  }
}

/**
 * Where the repositories of one scope read and write: the committed tables (reads outside a unit of
 * work, runAlone) or a transaction's snapshot. A getter, because a commit replaces the committed tables.
 */
export type TablesRef = () => MemoryTables;

/** Thrown by a method a fake does not model yet: the test needs a richer fake, not a workaround. */
export function notFaked(port: string, method: string): never {
  throw new Error(`${port}.${method} is not modelled by the in-memory fake (test/support/fakes): add it there, with a case in the port's contract suite`);
}
