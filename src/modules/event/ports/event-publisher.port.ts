import type { DomainEvent } from '../domain/domain-event.ts';

/** Publishes events to the message broker, deduplicated by event id. */
export interface EventPublisher {
  /** Publishes all events and resolves once the broker has stored each one. */
  publish(events: readonly DomainEvent[]): Promise<void>;
}
