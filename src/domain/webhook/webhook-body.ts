import type { DomainEvent } from '../event/domain-event.ts';

/**
 * The webhook body of an event: the spec's envelope {type, id, created, data}
 * plus livemode and the per-order sequence. Rendered once per delivery, so
 * every attempt sends the same bytes.
 */
export function webhookBody(event: DomainEvent): string {
  return JSON.stringify({
    type: event.type,
    id: event.id,
    created: event.createdAt.toISOString(),
    livemode: event.livemode,
    sequence: event.sequence,
    data: event.data,
  });
}
