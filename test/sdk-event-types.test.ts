// The SDK's WebhookEventType names exactly the service's event types: a type the service adds and
// the SDK lacks (or the reverse) fails the typecheck here, before a receiver's switch misses it.
import { expect, it } from 'vitest';
import type { WebhookEventType } from '../sdk/webhooks/webhook-event.ts';
import { EVENT_TYPES, type EventType } from '../src/modules/event/domain/domain-event.ts';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same: Same<EventType, WebhookEventType> = true;

it('the SDK knows every event type the service sends, and no other', () => {
  expect(same).toBe(true);
  const sdkTypes: readonly WebhookEventType[] = EVENT_TYPES;
  expect(new Set(sdkTypes).size).toBe(EVENT_TYPES.length);
});
