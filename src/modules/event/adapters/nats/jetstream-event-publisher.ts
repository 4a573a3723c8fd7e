import type { JetStreamClient, NatsConnection } from 'nats';
import type { DomainEvent } from '../../domain/domain-event.ts';
import { eventToJson } from '../../domain/event-json.ts';
import type { EventPublisher } from '../../ports/event-publisher.port.ts';
import type { StreamOptions } from './jetstream.ts';

/**
 * The JSON body of an event on NATS. installation_id names the installation
 * that published it, so a subscriber can tell its own events from another's.
 */
export function eventEnvelope(event: DomainEvent, installationId: string): Record<string, unknown> {
  return { ...eventToJson(event), installation_id: installationId };
}

/** Subject of an event: `${prefix}.${type}`, e.g. checkout.events.order.created. */
export function subjectOf(prefix: string, event: DomainEvent): string {
  return `${prefix}.${event.type}`;
}

/** EventPublisher on JetStream: msgID = event id, so a republished event is dropped as a duplicate. */
export class JetStreamEventPublisher implements EventPublisher {
  readonly #js: JetStreamClient;
  readonly #options: StreamOptions;
  readonly #timeoutMs: number;

  constructor(nc: NatsConnection, options: StreamOptions, timeoutMs = 5000) {
    this.#js = nc.jetstream();
    this.#options = options;
    this.#timeoutMs = timeoutMs;
  }

  async publish(events: readonly DomainEvent[]): Promise<void> {
    const encoder = new TextEncoder();
    await Promise.all(
      events.map((event) =>
        this.#js.publish(subjectOf(this.#options.subjectPrefix, event), encoder.encode(JSON.stringify(eventEnvelope(event, this.#options.installationId))), {
          msgID: event.id,
          expect: { streamName: this.#options.stream },
          timeout: this.#timeoutMs,
        }),
      ),
    );
  }
}
