import type { Scope } from '../../domain/merchant/caller.ts';
import type { DisabledReason, WebhookEndpoint } from '../../domain/webhook/webhook-endpoint.entity.ts';

/** A change to an endpoint; absent fields stay as they are. */
export interface EndpointChanges {
  readonly url?: string;
  readonly enabledEvents?: readonly string[];
  readonly description?: string;
  /** null re-enables. */
  readonly disabledReason?: DisabledReason | null;
}

/** Stores webhook endpoints and their signing secrets, per merchant and mode. */
export interface WebhookEndpointRepository {
  /**
   * Inserts the endpoint and its first secret unless the merchant already has
   * `maxPerMode` endpoints (not deleted) in its mode. The count and the insert
   * are atomic: concurrent inserts for one merchant and mode cannot pass the cap.
   */
  insert(endpoint: WebhookEndpoint, secret: string, maxPerMode: number): Promise<'inserted' | 'limit_reached'>;
  findById(scope: Scope, id: string): Promise<WebhookEndpoint | undefined>;
  list(scope: Scope): Promise<WebhookEndpoint[]>;
  update(scope: Scope, id: string, changes: EndpointChanges): Promise<WebhookEndpoint | undefined>;
  /** Deletes (soft) the endpoint; its queued deliveries stop. Answers false when absent. */
  delete(scope: Scope, id: string): Promise<boolean>;
  /** Adds a new current secret and retires the others at retireAt. */
  rotateSecret(endpointId: string, secret: string, retireAt: Date, now: Date): Promise<void>;
  /** The secrets that sign now, newest first. */
  activeSecrets(endpointId: string, now: Date): Promise<string[]>;
  /** The default endpoint of a merchant's mode (it holds the sandbox's issued secret). */
  findDefault(scope: Scope): Promise<WebhookEndpoint | undefined>;
}
