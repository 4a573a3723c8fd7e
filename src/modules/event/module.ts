import { PostgresEventOutbox } from './adapters/postgres/postgres-event-outbox.ts';
import { EVENT_ERRORS } from './errors.ts';
import type { EventScope } from './ports/event-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { PostgresEventLog } from './adapters/postgres/postgres-event-log.ts';
import { createEventService } from './application/event-service.ts';
import type { EventFeed } from './ports/event-subscription.port.ts';
import type { WebhookDeliveryQueue } from '../webhook/ports/webhook-delivery-queue.port.ts';
import type { WebhookEndpointRepository } from '../webhook/ports/webhook-endpoint-repository.port.ts';
import type { SigningSecrets } from '../webhook/application/signing-secrets.ts';
import { EventService } from '../../gen/checkout/v1/webhook_pb.ts';
import { ServiceUnavailableError } from '../../kernel/ports/errors.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { EVENT_ID_PREFIX } from './domain/domain-event.ts';

/** The event module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const EVENT_MODULE = {
  name: 'event',
  postgresObjectTables: [[EVENT_ID_PREFIX, 'events']],
  postgresScope: (db): EventScope => ({ outbox: new PostgresEventOutbox(db) }),
  errors: EVENT_ERRORS,
} satisfies ModuleManifest;

const NO_FEED: EventFeed = {
  tail: async () => {
    throw new ServiceUnavailableError('The event feed is not connected (NATS unreachable).');
  },
};

/** Wires EventService: the event log, resending to endpoints, and the live tail of `checkout listen` (unavailable without a feed). */
export function wireEvent(
  context: ModuleContext,
  deps: { readonly queue: WebhookDeliveryQueue; readonly endpoints: WebhookEndpointRepository; readonly secrets: SigningSecrets; readonly feed?: EventFeed },
): ModuleWiring {
  const service = createEventService({
    authenticate: context.authenticate,
    idempotent: context.idempotent,
    events: new PostgresEventLog(context.knex),
    queue: deps.queue,
    endpoints: deps.endpoints,
    secrets: deps.secrets,
    feed: deps.feed ?? NO_FEED,
    clock: context.clock,
  });
  return { services: [connectService(EventService, service, 'secret')] };
}
