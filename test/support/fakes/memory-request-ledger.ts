import type { Claim, KeyedRequest, RequestLedger } from '../../../src/kernel/ports/request-ledger.port.ts';
import type { ClaimResult, IdempotencyRecord, IdempotencyStore } from '../../../src/modules/order/ports/order-idempotency.port.ts';
import type { Scope } from '../../../src/kernel/domain/caller.ts';
import { asStored } from '../builders.ts';
import type { MemoryTables, TablesRef } from './memory-tables.ts';

const keyOf = (scope: Scope, key: string) => `${scope.merchantId}:${scope.livemode}:${key}`;

/** Claims an order-creation key in `tables`, or answers the record holding it (IdempotencyStore's rule). */
export function claimOrderKey(tables: MemoryTables, record: IdempotencyRecord): ClaimResult {
  const id = keyOf(record.scope, record.key);
  const existing = tables.idempotency.get(id);
  if (!existing) {
    tables.idempotency.set(id, { operation: record.operation, fingerprint: record.fingerprint, status: 'completed', response: null, order: asStored(record.order) });
    return { claimed: true };
  }
  // A key of another operation holds another response (or none yet): only the operation matters then.
  const order = existing.operation === record.operation && existing.order ? existing.order : record.order;
  return { claimed: false, existing: { ...record, operation: existing.operation, fingerprint: existing.fingerprint, order } };
}

/** IdempotencyStore in memory. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async claim(record: IdempotencyRecord): Promise<ClaimResult> {
    return claimOrderKey(this.#tables(), record);
  }
}

/**
 * RequestLedger in memory. A claim lives in the transaction's snapshot, so a rolled-back transaction
 * takes it along; a concurrent claim cannot happen (the unit of work runs one transaction at a time),
 * which is what Postgres's wait-then-conflict comes to.
 */
export class MemoryRequestLedger implements RequestLedger {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async claim(request: KeyedRequest): Promise<Claim> {
    const tables = this.#tables();
    const id = keyOf(request.scope, request.key);
    const existing = tables.idempotency.get(id);
    if (!existing || (existing.response === null && existing.operation === request.operation && existing.fingerprint === request.fingerprint)) {
      tables.idempotency.set(id, { operation: request.operation, fingerprint: request.fingerprint, status: 'in_progress', response: null });
      return { kind: 'claimed' };
    }
    if (existing.operation !== request.operation || existing.fingerprint !== request.fingerprint) return { kind: 'mismatch', operation: existing.operation };
    return { kind: 'replay', response: existing.response === null ? null : JSON.parse(existing.response) };
  }

  async complete(request: KeyedRequest, _resourceId: string, response: unknown): Promise<void> {
    const tables = this.#tables();
    const id = keyOf(request.scope, request.key);
    const existing = tables.idempotency.get(id);
    if (!existing) return; // an UPDATE of no row, as in Postgres
    tables.idempotency.set(id, { ...existing, status: 'completed', response: JSON.stringify(response) });
  }
}
