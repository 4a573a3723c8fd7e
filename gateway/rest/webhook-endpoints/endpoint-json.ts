import type { WebhookEndpoint } from '../../../src/gen/checkout/v1/webhook_pb.ts';
import { isoOrNull as iso } from '../shared/time-json.ts';

/** A webhook endpoint as the REST API shows it. */
export function endpointJson(endpoint: WebhookEndpoint): Record<string, unknown> {
  return {
    id: endpoint.id,
    object: 'webhook_endpoint',
    url: endpoint.url || null,
    enabled_events: endpoint.enabledEvents,
    description: endpoint.description,
    status: endpoint.disabled ? 'disabled' : 'enabled',
    disabled_reason: endpoint.disabledReason || null,
    is_default: endpoint.isDefault,
    livemode: endpoint.livemode,
    created: iso(endpoint.created),
  };
}
