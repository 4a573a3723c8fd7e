import type { DomainEvent } from '../../event/domain/domain-event.ts';
import { eventToJson } from '../../event/domain/event-json.ts';

/**
 * The webhook body of an event: the spec's envelope {type, id, created, data}
 * plus livemode and the per-subject sequence, taken from the event's one JSON
 * encoding. Rendered once per delivery, so every attempt sends the same bytes.
 */
export function webhookBody(event: DomainEvent): string {
  const { type, id, created, livemode, sequence, data } = eventToJson(event);
  return JSON.stringify({ type, id, created, livemode, sequence, data });
}
