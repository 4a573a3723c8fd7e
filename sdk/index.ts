// The merchant's server SDK, published as @hosted-checkout/node (sdk/node/package.json): the REST client
// `new Checkout(secretKey, {baseUrl})` and its errors, and the webhook verifier, test header and
// processed-event store (also published alone as @hosted-checkout/webhooks).
export * from './webhooks/index.ts';
export * from './node/index.ts';
