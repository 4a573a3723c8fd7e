// In-memory fakes of the ports, for use-case tests that run in milliseconds (issue 21, point 6).
//
// They live in test/support, not src/adapters/memory: they are test code. Nothing in the service may
// wire them (a composition root that could pick them would be one flag away from running payments
// on a Map), they keep no data worth keeping, and they model only what the use cases under test need
// (a method they do not model throws notFaked, which says where to add it). Each one passes the
// contract suite of its port (test/contracts/*.contract.ts) beside the Postgres adapter, so a rule
// proven on the fakes holds on Postgres as far as the contract reaches.
import type { TransactionScope } from '../../../src/kernel/ports/unit-of-work.port.ts';
import { FixedClock } from './fixed-clock.ts';
import { MemoryOutboxReader, committedEvents } from './memory-event-outbox.ts';
import { MemoryIdempotencyStore } from './memory-request-ledger.ts';
import { postedTransactions } from './memory-ledger-journal.ts';
import { MemoryMerchantRepository } from './memory-merchant-repository.ts';
import { MemoryOrderCreationStore } from './memory-order-repository.ts';
import { emptyTables, type MemoryTables } from './memory-tables.ts';
import { MemoryUnitOfWork, memoryScope, type MemoryDatabase } from './memory-unit-of-work.ts';
import { SequentialIds } from './sequential-ids.ts';

export { FixedClock } from './fixed-clock.ts';
export { SequentialIds } from './sequential-ids.ts';
export { ScriptedProcessor, type Script, type ProcessorCall } from './scripted-processor.ts';
export { MemoryUnitOfWork, memoryScope } from './memory-unit-of-work.ts';
export { committedEvents } from './memory-event-outbox.ts';
export { postedTransactions } from './memory-ledger-journal.ts';

/** One in-memory world: committed tables, a unit of work over them, and the ports outside transactions. */
export interface MemoryWorld {
  readonly db: MemoryDatabase;
  readonly uow: MemoryUnitOfWork;
  readonly clock: FixedClock;
  readonly ids: SequentialIds;
  /** Merchants, API keys and test cards (MerchantRepository, ApiKeyResolver, TestCardDirectory). */
  readonly merchants: MemoryMerchantRepository;
  readonly orderCreation: MemoryOrderCreationStore;
  readonly idempotency: MemoryIdempotencyStore;
  /** Repositories outside any transaction (the use cases' single reads). */
  readonly reads: TransactionScope;
  readonly outboxReader: MemoryOutboxReader;
  /** The committed tables, for assertions. */
  readonly tables: MemoryTables;
  /** Every committed event, in the order appended. */
  events(): ReturnType<typeof committedEvents>;
  /** Every posted ledger transaction, in the order posted. */
  ledger(): ReturnType<typeof postedTransactions>;
}

/** A new, empty in-memory world; its clock starts at 2026-03-02T10:00Z unless told. */
export function memoryWorld(options: { readonly start?: Date | string } = {}): MemoryWorld {
  const db: MemoryDatabase = { tables: emptyTables() };
  const committed = () => db.tables;
  return {
    db,
    uow: new MemoryUnitOfWork(db),
    clock: new FixedClock(options.start),
    ids: new SequentialIds(),
    merchants: new MemoryMerchantRepository(committed),
    orderCreation: new MemoryOrderCreationStore(committed),
    idempotency: new MemoryIdempotencyStore(committed),
    reads: memoryScope(committed),
    outboxReader: new MemoryOutboxReader(committed),
    get tables() {
      return db.tables;
    },
    events: () => committedEvents(db.tables),
    ledger: () => postedTransactions(db.tables),
  };
}
