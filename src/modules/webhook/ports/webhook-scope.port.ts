import type { WebhookEndpointRepository } from './webhook-endpoint-repository.port.ts';
import type { WebhookDeliveryQueue } from './webhook-delivery-queue.port.ts';

/** The webhook module's repositories bound to one transaction (its part of the kernel's TransactionScope). */
export interface WebhookScope {
  readonly endpoints: WebhookEndpointRepository;
  readonly deliveries: WebhookDeliveryQueue;
}

declare module '../../../kernel/ports/unit-of-work.port.ts' {
  // Merged into the kernel's scope: a use case's `tx` has the webhook module's repositories too.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface TransactionScope extends WebhookScope {}
}
