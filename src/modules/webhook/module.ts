import { PostgresWebhookEndpointRepository } from './adapters/postgres/postgres-webhook-endpoint-repository.ts';
import { PostgresWebhookDeliveryQueue } from './adapters/postgres/postgres-webhook-delivery-queue.ts';
import { WEBHOOK_ERRORS } from './errors.ts';
import type { WebhookScope } from './ports/webhook-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { createAddressPolicy } from './adapters/http/address-policy.ts';
import { createWebhookEndpointService } from './application/webhook-endpoint-service.ts';
import type { SigningSecrets } from './application/signing-secrets.ts';
import type { WebhookDeliveryQueue } from './ports/webhook-delivery-queue.port.ts';
import type { WebhookEndpointRepository } from './ports/webhook-endpoint-repository.port.ts';
import { WebhookEndpointService } from '../../gen/checkout/v1/webhook_pb.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { ENDPOINT_ID_PREFIX } from './domain/webhook-endpoint.entity.ts';

/** The webhook module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const WEBHOOK_MODULE = {
  name: 'webhook',
  postgresObjectTables: [[ENDPOINT_ID_PREFIX, 'webhook_endpoints']],
  postgresScope: (db): WebhookScope => ({ endpoints: new PostgresWebhookEndpointRepository(db), deliveries: new PostgresWebhookDeliveryQueue(db) }),
  errors: WEBHOOK_ERRORS,
} satisfies ModuleManifest;

/** The webhook module wired: WebhookEndpointService, and the delivery queue the dispatcher drains. */
export interface WebhookWiring extends ModuleWiring {
  readonly queue: WebhookDeliveryQueue;
  readonly endpoints: WebhookEndpointRepository;
}

/** Wires the webhook module over Postgres; endpoints' signing secrets are sealed under the vault's keys. */
export function wireWebhook(
  context: ModuleContext,
  deps: {
    readonly secrets: SigningSecrets;
    /** Whether endpoint URLs may name loopback and private addresses (WEBHOOK_ALLOW_PRIVATE_NETWORKS); off by default. */
    readonly allowPrivateNetworks?: boolean;
  },
): WebhookWiring {
  const { knex, ids, clock } = context;
  const endpoints = new PostgresWebhookEndpointRepository(knex);
  const addressPolicy = createAddressPolicy({ allowPrivateNetworks: deps.allowPrivateNetworks ?? false });
  const service = createWebhookEndpointService({ authenticate: context.authenticate, endpoints, ids, clock, addressPolicy, idempotent: context.idempotent, secrets: deps.secrets });
  return { services: [connectService(WebhookEndpointService, service, 'secret')], queue: new PostgresWebhookDeliveryQueue(knex), endpoints };
}
