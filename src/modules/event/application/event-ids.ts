import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import { EVENT_ID_PREFIX } from '../domain/domain-event.ts';

/** The id and time of the next event a change appends to the outbox. */
export type EventIds = () => { eventId: string; now: Date };

/** Ids and time for events, from the core's id generator and clock. */
export function createEventIds(ids: IdGenerator, clock: Clock): EventIds {
  return () => ({ eventId: ids.newId(EVENT_ID_PREFIX), now: clock.now() });
}
