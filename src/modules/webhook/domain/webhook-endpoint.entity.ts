import { EVENT_TYPES } from '../../event/domain/domain-event.ts';
import { invalid } from '../../../kernel/domain/domain-error.ts';

/** Every event type a webhook endpoint can subscribe to: every event type there is (the spec's six plus ours). */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES;

/** Why an endpoint receives nothing. */
export type DisabledReason = 'by_merchant' | 'no_url' | 'failing';

/** Where a merchant's events are delivered. */
export interface WebhookEndpoint {
  /** "we_" + opaque suffix. */
  readonly id: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  /** Null for a sandbox's default endpoint until the merchant sets one. */
  readonly url: string | null;
  /** Event types, or ["*"] for all. */
  readonly enabledEvents: readonly string[];
  readonly description: string;
  readonly disabledReason: DisabledReason | null;
  readonly isDefault: boolean;
  readonly createdAt: Date;
}

/** Prefix of endpoint ids. */
export const ENDPOINT_ID_PREFIX = 'we_';

/** The id of a merchant's default endpoint of a mode (it holds the webhook secret issued with the sandbox). */
export function defaultEndpointId(merchantId: string, livemode: boolean): string {
  return `${ENDPOINT_ID_PREFIX}default_${merchantId.slice(4)}_${livemode ? 'live' : 'test'}`;
}

/** True when the endpoint wants events of this type. */
export function subscribes(endpoint: Pick<WebhookEndpoint, 'enabledEvents'>, type: string): boolean {
  return endpoint.enabledEvents.includes('*') || endpoint.enabledEvents.includes(type);
}

/**
 * Validates a subscription list: "*" alone, or known event types.
 * @throws DomainError webhook.events_invalid
 */
export function parseEnabledEvents(events: readonly string[]): string[] {
  if (events.length === 0) throw invalid('webhook.events_invalid', 'enabled_events', 'enabled_events needs at least one event type, or "*" for all.');
  const unique = [...new Set(events)];
  if (unique.includes('*')) {
    if (unique.length > 1) throw invalid('webhook.events_invalid', 'enabled_events', '"*" already means every event; send it alone.');
    return ['*'];
  }
  for (const type of unique) {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) {
      throw invalid('webhook.events_invalid', 'enabled_events', `Unknown event type "${type}". Known: ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
    }
  }
  return unique;
}

/** Most endpoints a merchant may have per mode, deleted ones not counted and the default endpoint included. */
export const MAX_ENDPOINTS_PER_MODE = 16;

/**
 * Validates an endpoint URL: http(s) without credentials, https in live mode,
 * and a host the address policy does not refuse (in both modes). Where a name
 * resolves to is judged again on every delivery, on the address actually connected.
 * @param refuseHost the address policy (an adapter's knowledge of IP ranges): why a host is refused, or undefined.
 * @throws DomainError webhook.url_invalid, webhook.url_forbidden
 */
export function parseEndpointUrl(raw: string, livemode: boolean, refuseHost: (host: string) => string | undefined): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('webhook.url_invalid', 'url', 'url must be an absolute URL, e.g. "https://shop.example/webhooks".');
  }
  if (raw.length > 2048 || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    throw invalid('webhook.url_invalid', 'url', 'url must be an http(s) URL of at most 2048 characters, without credentials.');
  }
  if (livemode && url.protocol !== 'https:') throw invalid('webhook.url_invalid', 'url', 'Live-mode endpoints must use https.');
  const refusal = refuseHost(url.hostname);
  if (refusal !== undefined) {
    throw invalid(
      'webhook.url_forbidden',
      'url',
      `Webhook endpoints may not point at loopback, private, link-local, metadata or reserved addresses (${refusal}). ` +
        'To receive test events on your own machine, run `checkout listen --forward-to http://localhost:4000/webhooks`.',
    );
  }
  return url.toString();
}
