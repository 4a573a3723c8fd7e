import type { DomainEvent } from '../domain/domain-event.ts';
import type { Scope } from '../../merchant/domain/caller.ts';

/** A running consumption; stop() waits for the event in hand. */
export interface Consumption {
  stop(): Promise<void>;
}

/** One delivery of an event from the stream. */
export interface ReceivedEvent {
  readonly event: DomainEvent;
  /** The installation that published it; undefined for events published before events carried one. */
  readonly installationId: string | undefined;
  /** How many times the broker has handed over this event, this time included (1 the first time). */
  readonly deliveryCount: number;
}

/**
 * What the handler made of an event: `handled` (acknowledged, never seen
 * again), `retry` (handed over again after delayMs) or `reject` (never handed
 * to this subscription again, and not acknowledged as handled).
 */
export type Settlement = { readonly kind: 'handled' } | { readonly kind: 'retry'; readonly delayMs: number } | { readonly kind: 'reject' };

/**
 * Durable consumption of the event stream: an event is acknowledged only when
 * the handler answers `handled`, so a crash means redelivery, never loss. A
 * handler that throws gets the event again shortly; a message that cannot be
 * read as an event is rejected and reported to onError.
 */
export interface EventSubscription {
  consume(handler: (received: ReceivedEvent) => Promise<Settlement>, onError: (err: unknown) => void): Promise<Consumption>;
}

/** A live tail of one merchant's events in one mode, from now on (for the local listener). */
export interface EventFeed {
  tail(scope: Scope, onEvent: (event: DomainEvent) => void): Promise<{ close(): void }>;
}
