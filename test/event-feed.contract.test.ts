/**
 * The EventFeed contract (test/contracts/event-feed.contract.ts) against both of its adapters: the
 * NATS feed on the machine's NATS and the Postgres feed of the event stream in Postgres (no NATS).
 */
import { describe } from 'vitest';
import { eventFeedContract } from './contracts/event-feed.contract.ts';
import { TRANSPORTS } from './contracts/event-transports.ts';
import { requiresForEvents } from './support/requirements.ts';

// JetStream is skipped, and named in the run's last line, where the run has no NATS.
for (const kind of TRANSPORTS) describe(`EventFeed over ${kind}`, requiresForEvents(kind), () => {
  eventFeedContract(kind);
});
