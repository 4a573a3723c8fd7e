import { PostgresWebhookEndpointRepository } from './adapters/postgres/postgres-webhook-endpoint-repository.ts';
import { PostgresWebhookDeliveryQueue } from './adapters/postgres/postgres-webhook-delivery-queue.ts';
import { WEBHOOK_ERRORS } from './errors.ts';
import type { WebhookScope } from './ports/webhook-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The webhook module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const WEBHOOK_MODULE = {
  name: 'webhook',
  postgresScope: (db): WebhookScope => ({ endpoints: new PostgresWebhookEndpointRepository(db), deliveries: new PostgresWebhookDeliveryQueue(db) }),
  errors: WEBHOOK_ERRORS,
} satisfies ModuleManifest;
