// @hosted-checkout/webhooks: what a receiver needs to accept our webhooks safely (also exported by
// @hosted-checkout/node, whose entry is ../index.ts).
export { verifyWebhook, DEFAULT_TOLERANCE_SECONDS, type VerifyWebhookOptions } from './verify.ts';
export { WebhookVerificationError, type WebhookVerificationErrorReason } from './webhook-verification-error.ts';
export type { WebhookEvent, WebhookEventData, WebhookEventType } from './webhook-event.ts';
export { generateTestHeader, type GenerateTestHeaderParams } from './test-header.ts';
export {
  InMemoryProcessedEventStore,
  processEventOnce,
  type InMemoryProcessedEventStoreOptions,
  type ProcessedEventStore,
  type ProcessEventOutcome,
} from './processed-events.ts';
export { SIGNATURE_HEADER, type RawBody } from './signature.ts';
