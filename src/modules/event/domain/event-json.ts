import { EVENT_TYPES, SUBJECT_TYPES, type DomainEvent, type EventType, type JsonValue, type SubjectType } from './domain-event.ts';

/**
 * The one JSON encoding of an event: what NATS carries (with the publishing
 * installation's id beside it), and what the webhook body and the event log
 * show parts of. snake_case, times in ISO 8601 UTC.
 */
export interface EventJson {
  readonly id: string;
  readonly type: EventType;
  readonly created: string;
  readonly livemode: boolean;
  readonly merchant_id: string;
  readonly subject: { readonly type: SubjectType; readonly id: string };
  readonly order_id: string | null;
  readonly reference: string | null;
  readonly sequence: number;
  readonly data: { [key: string]: JsonValue };
}

/** A value that is not an event's JSON; the message says what is missing. */
export class EventJsonError extends Error {
  override readonly name = 'EventJsonError';
}

/** Encodes an event. */
export function eventToJson(event: DomainEvent): EventJson {
  return {
    id: event.id,
    type: event.type,
    created: event.createdAt.toISOString(),
    livemode: event.livemode,
    merchant_id: event.merchantId,
    subject: { type: event.subject.type, id: event.subject.id },
    order_id: event.orderId,
    reference: event.reference,
    sequence: event.sequence,
    data: event.data,
  };
}

const isString = (v: unknown): v is string => typeof v === 'string';

/**
 * Decodes an event's JSON. An encoding from before events named their
 * subject (an order event) gets its order as the subject.
 * @throws EventJsonError when a field is missing or of the wrong type.
 */
export function eventFromJson(value: unknown): DomainEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new EventJsonError('an event is a JSON object');
  const e = value as Record<string, unknown>;
  if (!isString(e.id) || !isString(e.merchant_id) || typeof e.livemode !== 'boolean' || !isString(e.created) || Number.isNaN(Date.parse(e.created))) {
    throw new EventJsonError('the event lacks id, merchant_id, livemode or created');
  }
  if (!(EVENT_TYPES as readonly unknown[]).includes(e.type)) throw new EventJsonError(`unknown event type ${JSON.stringify(e.type)}`);
  const orderId = isString(e.order_id) ? e.order_id : null;
  const subject = e.subject as { type?: unknown; id?: unknown } | undefined;
  const subjectType = subject?.type ?? (orderId ? 'order' : undefined);
  const subjectId = subject?.id ?? orderId;
  if (!(SUBJECT_TYPES as readonly unknown[]).includes(subjectType) || !isString(subjectId)) throw new EventJsonError('the event names no subject');
  return {
    id: e.id,
    type: e.type as EventType,
    merchantId: e.merchant_id,
    livemode: e.livemode,
    subject: { type: subjectType as SubjectType, id: subjectId },
    orderId,
    reference: isString(e.reference) ? e.reference : null,
    sequence: typeof e.sequence === 'number' ? e.sequence : 0,
    createdAt: new Date(e.created),
    data: typeof e.data === 'object' && e.data !== null ? (e.data as { [key: string]: JsonValue }) : {},
  };
}
