import type { DomainEvent } from '../../../src/modules/event/domain/domain-event.ts';
import type { EventOutbox, OutboxBatch, OutboxReader } from '../../../src/modules/event/ports/event-outbox.port.ts';
import { ConflictError } from '../../../src/kernel/ports/errors.ts';
import type { MemoryTables, TablesRef } from './memory-tables.ts';

/** events.seq: one counter for every fake world, so that rows appended in any transaction keep their order. */
let nextSeq = 1;

/** Appends an event row: ids are unique, and so is each subject's sequence (events_subject_sequence_unique). */
export function appendEvent(tables: MemoryTables, event: DomainEvent): void {
  if (tables.events.has(event.id)) throw new ConflictError(`event ${event.id} exists`);
  for (const row of tables.events.values()) {
    if (row.event.subject.type === event.subject.type && row.event.subject.id === event.subject.id && row.event.sequence === event.sequence) {
      throw new ConflictError('The subject of this event changed.');
    }
  }
  tables.events.set(event.id, { event, seq: nextSeq++, published: false });
}

/** EventOutbox in memory: the event is in the transaction's snapshot, seen by the relay once it commits. */
export class MemoryEventOutbox implements EventOutbox {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async append(event: DomainEvent): Promise<void> {
    appendEvent(this.#tables(), event);
  }
}

/** The relay's side in memory: the oldest unpublished committed events; marking them published is kept only if fn returns. */
export class MemoryOutboxReader implements OutboxReader {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async withUnpublished<T>(limit: number, fn: (batch: OutboxBatch) => Promise<T>): Promise<T> {
    const tables = this.#tables();
    const rows = [...tables.events.values()]
      .filter((row) => !row.published)
      .sort((a, b) => a.event.createdAt.getTime() - b.event.createdAt.getTime() || a.seq - b.seq)
      .slice(0, limit);
    let marked = false;
    const result = await fn({
      events: rows.map((row) => row.event),
      markPublished: async () => {
        marked = true;
      },
    });
    if (marked) for (const row of rows) tables.events.set(row.event.id, { ...row, published: true });
    return result;
  }
}

/** Every event committed, in the order appended: what a use-case test asserts on. */
export function committedEvents(tables: MemoryTables): DomainEvent[] {
  return [...tables.events.values()].sort((a, b) => a.seq - b.seq).map((row) => row.event);
}
