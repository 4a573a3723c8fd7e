/**
 * The EventSubscription contract (test/contracts/event-subscription.contract.ts) against both of its
 * adapters: the JetStream consumer on the machine's NATS and the Postgres consumer of the event
 * stream in Postgres (no NATS), each on a database of its own.
 */
import { describe } from 'vitest';
import { eventSubscriptionContract } from './contracts/event-subscription.contract.ts';
import { TRANSPORTS } from './contracts/event-transports.ts';

describe.each(TRANSPORTS)('EventSubscription over %s', (kind) => {
  eventSubscriptionContract(kind);
});
