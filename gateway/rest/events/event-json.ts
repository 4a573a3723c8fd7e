import type { DeliveryAttempt, Event } from '../../../src/gen/checkout/v1/webhook_pb.ts';
import { isoOrNull as iso } from '../shared/time-json.ts';

/** An event as the REST API shows it: the webhook envelope plus its order context. */
export function eventJson(event: Event): Record<string, unknown> {
  return {
    id: event.id,
    object: 'event',
    type: event.type,
    created: iso(event.created),
    livemode: event.livemode,
    subject: { type: event.subjectType, id: event.subjectId },
    order_id: event.orderId || null,
    reference: event.reference || null,
    sequence: event.sequence,
    data: event.data ?? {},
  };
}

/** A delivery attempt as the REST API shows it. */
export function deliveryAttemptJson(attempt: DeliveryAttempt): Record<string, unknown> {
  return {
    id: attempt.id,
    object: 'delivery_attempt',
    event_id: attempt.eventId,
    endpoint_id: attempt.endpointId,
    attempted_at: iso(attempt.attemptedAt),
    status_code: attempt.statusCode || null,
    error: attempt.error || null,
    duration_ms: attempt.durationMs,
    response_excerpt: attempt.responseExcerpt,
  };
}
