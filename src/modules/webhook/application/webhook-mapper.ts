import { create } from '@bufbuild/protobuf';
import type { JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { DeliveryAttemptSchema, EventSchema, WebhookEndpointSchema, type DeliveryAttempt, type Event, type WebhookEndpoint as ProtoEndpoint } from '../../../gen/checkout/v1/webhook_pb.ts';
import type { DomainEvent } from '../../event/domain/domain-event.ts';
import type { WebhookEndpoint } from '../domain/webhook-endpoint.entity.ts';
import type { DeliveryAttemptView } from '../ports/webhook-delivery-queue.port.ts';

/** Maps an endpoint to its proto message. */
export function endpointToProto(endpoint: WebhookEndpoint): ProtoEndpoint {
  return create(WebhookEndpointSchema, {
    id: endpoint.id,
    url: endpoint.url ?? '',
    enabledEvents: [...endpoint.enabledEvents],
    description: endpoint.description,
    disabled: endpoint.disabledReason !== null,
    disabledReason: endpoint.disabledReason ?? '',
    livemode: endpoint.livemode,
    created: timestampFromDate(endpoint.createdAt),
    isDefault: endpoint.isDefault,
  });
}

/** Maps an event to its proto message (data as a Struct). */
export function eventToProto(event: DomainEvent): Event {
  return create(EventSchema, {
    id: event.id,
    type: event.type,
    created: timestampFromDate(event.createdAt),
    livemode: event.livemode,
    orderId: event.orderId ?? '',
    reference: event.reference ?? '',
    sequence: event.sequence,
    subjectType: event.subject.type,
    subjectId: event.subject.id,
    data: event.data as JsonObject,
  });
}

/** Maps a delivery attempt to its proto message. */
export function attemptToProto(attempt: DeliveryAttemptView): DeliveryAttempt {
  return create(DeliveryAttemptSchema, {
    id: attempt.id,
    eventId: attempt.eventId,
    endpointId: attempt.endpointId,
    attemptedAt: timestampFromDate(attempt.attemptedAt),
    statusCode: attempt.statusCode ?? 0,
    error: attempt.error ?? '',
    durationMs: attempt.durationMs,
    responseExcerpt: attempt.responseExcerpt,
  });
}
