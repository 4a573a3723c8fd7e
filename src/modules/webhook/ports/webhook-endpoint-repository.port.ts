import type { Scope } from '../../merchant/domain/caller.ts';
import type { DisabledReason, WebhookEndpoint } from '../domain/webhook-endpoint.entity.ts';
import type { SealedSecret } from '../../../kernel/ports/key-ring.port.ts';

/**
 * A signing secret as stored: sealed under the vault's key ring (bound to its endpoint's id), or,
 * for a row an earlier release wrote after migration 027, in clear until it is sealed.
 */
export type SigningSecretRecord = { readonly id: string; readonly sealed: SealedSecret } | { readonly id: string; readonly clear: string };

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
   * Inserts the endpoint and its first secret (sealed) unless the merchant already has
   * `maxPerMode` endpoints (not deleted) in its mode. The count and the insert
   * are atomic: concurrent inserts for one merchant and mode cannot pass the cap.
   * Answers the secret's id.
   */
  insert(endpoint: WebhookEndpoint, secret: SealedSecret, maxPerMode: number): Promise<{ readonly secretId: string } | 'limit_reached'>;
  findById(scope: Scope, id: string): Promise<WebhookEndpoint | undefined>;
  list(scope: Scope): Promise<WebhookEndpoint[]>;
  update(scope: Scope, id: string, changes: EndpointChanges): Promise<WebhookEndpoint | undefined>;
  /** Deletes (soft) the endpoint; its queued deliveries stop. Answers false when absent. */
  delete(scope: Scope, id: string): Promise<boolean>;
  /** Adds a new current secret (sealed) and retires the others at retireAt; answers the new secret's id. */
  rotateSecret(endpointId: string, secret: SealedSecret, retireAt: Date, now: Date): Promise<string>;
  /** The secrets that sign now, newest first. */
  activeSecrets(endpointId: string, now: Date): Promise<SigningSecretRecord[]>;
  /** One secret of the endpoint by its id, retired or not (a repeated create or rotation answers it again). */
  findSecret(endpointId: string, secretId: string): Promise<SigningSecretRecord | undefined>;
  /** The default endpoint of a merchant's mode (it holds the sandbox's issued secret). */
  findDefault(scope: Scope): Promise<WebhookEndpoint | undefined>;
}
