/**
 * The EventSubscription contract (test/contracts/event-subscription.contract.ts) against both of its
 * adapters: the JetStream consumer on the machine's NATS and the Postgres consumer of the event
 * stream in Postgres (no NATS), each on a database of its own.
 */
import { describe } from 'vitest';
import { eventSubscriptionContract } from './contracts/event-subscription.contract.ts';
import { TRANSPORTS } from './contracts/event-transports.ts';
import { requiresForEvents } from './support/requirements.ts';

// JetStream is skipped, and named in the run's last line, where the run has no NATS.
for (const kind of TRANSPORTS) describe(`EventSubscription over ${kind}`, requiresForEvents(kind), () => {
  eventSubscriptionContract(kind);
});
