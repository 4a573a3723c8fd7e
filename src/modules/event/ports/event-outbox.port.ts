import type { DomainEvent } from '../domain/domain-event.ts';

/** The transactional outbox: events written beside the change that caused them. */
export interface EventOutbox {
  /** Records an event; it becomes visible to the relay when the transaction commits. */
  append(event: DomainEvent): Promise<void>;
}

/** The relay's view of the outbox. */
export interface OutboxBatch {
  readonly events: readonly DomainEvent[];
  /** Marks this batch's events published; the lock on them is released at commit. */
  markPublished(): Promise<void>;
}

/** Reads unpublished events under a lock, so two relays never take the same row. */
export interface OutboxReader {
  /**
   * Runs fn over the oldest unpublished events not locked by another relay.
   * If fn throws, nothing is marked and the events stay for the next pass.
   */
  withUnpublished<T>(limit: number, fn: (batch: OutboxBatch) => Promise<T>): Promise<T>;
}
