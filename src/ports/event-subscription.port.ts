import type { DomainEvent } from '../domain/event/domain-event.ts';
import type { Scope } from '../domain/merchant/caller.ts';

/** A running consumption; stop() waits for the event in hand. */
export interface Consumption {
  stop(): Promise<void>;
}

/**
 * Durable consumption of the event stream: an event is acknowledged only
 * after the handler resolves, so a crash means redelivery, never loss.
 */
export interface EventSubscription {
  consume(handler: (event: DomainEvent) => Promise<void>, onError: (err: unknown) => void): Promise<Consumption>;
}

/** A live tail of one merchant's events in one mode, from now on (for the local listener). */
export interface EventFeed {
  tail(scope: Scope, onEvent: (event: DomainEvent) => void): Promise<{ close(): void }>;
}
