import type { DomainEvent } from '../domain/domain-event.ts';
import type { Scope } from '../../merchant/domain/caller.ts';

/** Filters of the event log. */
export interface EventQuery {
  readonly limit: number;
  readonly startingAfter: string | undefined;
  readonly type: string | undefined;
  readonly orderId: string | undefined;
  readonly reference: string | undefined;
}

/** Reads the events a merchant's changes produced (the outbox is the log). */
export interface EventLog {
  list(scope: Scope, query: EventQuery): Promise<{ events: DomainEvent[]; hasMore: boolean }>;
  findById(scope: Scope, id: string): Promise<DomainEvent | undefined>;
}
