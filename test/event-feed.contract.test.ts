/**
 * The EventFeed contract (test/contracts/event-feed.contract.ts) against both of its adapters: the
 * NATS feed on the machine's NATS and the Postgres feed of the event stream in Postgres (no NATS).
 */
import { describe } from 'vitest';
import { eventFeedContract } from './contracts/event-feed.contract.ts';
import { TRANSPORTS } from './contracts/event-transports.ts';

describe.each(TRANSPORTS)('EventFeed over %s', (kind) => {
  eventFeedContract(kind);
});
