// The merchant-side SDK: what a receiver needs to accept our webhooks safely, and (at the end) the
// server client of the REST API.
export { verifyWebhook, DEFAULT_TOLERANCE_SECONDS, type VerifyWebhookOptions } from './webhooks/verify.ts';
export { WebhookVerificationError, type WebhookVerificationErrorReason } from './webhooks/webhook-verification-error.ts';
export type { WebhookEvent, WebhookEventData, WebhookEventType } from './webhooks/webhook-event.ts';
export { generateTestHeader, type GenerateTestHeaderParams } from './webhooks/test-header.ts';
export {
  InMemoryProcessedEventStore,
  processEventOnce,
  type InMemoryProcessedEventStoreOptions,
  type ProcessedEventStore,
  type ProcessEventOutcome,
} from './webhooks/processed-events.ts';
export { SIGNATURE_HEADER, type RawBody } from './webhooks/signature.ts';

// The server SDK: `new Checkout(secretKey, {baseUrl})` and its errors.
export * from './node/index.ts';
