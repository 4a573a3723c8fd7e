// What a Medusa project configures the provider with (medusa-config's `options` of the provider), checked
// when Medusa loads it.
import type { RefundCreateParams } from '@hosted-checkout/node';

/** The options of the provider in medusa-config (`modules` → payment → `providers[].options`). */
export interface HostedCheckoutOptions {
  /** Where the service's REST API answers, e.g. https://api.checkout.example (your sandbox's api_base_url). */
  readonly baseUrl: string;
  /** The merchant's secret key (sk_test_… or sk_live_…). */
  readonly secretKey: string;
  /** The signing secret (whsec_…) of the webhook endpoint registered at Medusa's /hooks/payment/<provider>; two during a rotation. */
  readonly webhookSecret: string | readonly string[];
  /** `automatic` (the default): the order is captured as the customer pays. `manual`: authorized only, captured from Medusa's admin. */
  readonly captureMethod?: 'automatic' | 'manual';
  /** Where the hosted checkout sends the customer after paying (an absolute http(s) URL; the service adds order_id and reference). */
  readonly returnUrl?: string;
  /** The reason our refunds record for a refund made in Medusa. Default `requested_by_customer`. */
  readonly refundReason?: RefundCreateParams['reason'];
  /** Milliseconds per attempt of a call to the service. Default 15 000. */
  readonly timeoutMs?: number;
  /** Retries of a call to the service that failed on the network or with a 5xx, with the same Idempotency-Key. Default 2. */
  readonly maxRetries?: number;
  /** How far a webhook's signed timestamp may be from now, in seconds. Default 300. */
  readonly webhookToleranceSeconds?: number;
}

const REFUND_REASONS: ReadonlySet<string> = new Set(['requested_by_customer', 'duplicate', 'fraudulent', 'product_not_received', 'other']);

/**
 * Checks the provider's options as Medusa passes them (anything: medusa-config is plain JavaScript).
 * @throws TypeError naming the option and the likely mistake
 */
export function checkOptions(options: unknown): HostedCheckoutOptions {
  const o = (options ?? {}) as Partial<Record<keyof HostedCheckoutOptions, unknown>>;
  const fail = (message: string): never => {
    throw new TypeError(`@hosted-checkout/medusa: ${message}`);
  };
  if (typeof o.baseUrl !== 'string' || !/^https?:\/\/[^/]/.test(o.baseUrl)) {
    fail(`baseUrl must be the service's absolute http(s) URL, e.g. https://api.checkout.example; got ${JSON.stringify(o.baseUrl)}.`);
  }
  if (typeof o.secretKey !== 'string' || !/^sk_(test|live)_/.test(o.secretKey)) {
    const hint = typeof o.secretKey === 'string' && o.secretKey.startsWith('pk_') ? ' That is a publishable key: Medusa runs on your server and needs the secret one.' : ' Is the environment variable that holds it set?';
    fail(`secretKey must be a secret key (sk_test_… or sk_live_…).${hint}`);
  }
  const secrets = typeof o.webhookSecret === 'string' ? [o.webhookSecret] : Array.isArray(o.webhookSecret) ? (o.webhookSecret as unknown[]) : [];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || !s.startsWith('whsec_'))) {
    fail('webhookSecret must be the signing secret (whsec_…) of the webhook endpoint registered at Medusa\'s /hooks/payment/<provider> route (a list of two during a rotation).');
  }
  if (o.captureMethod !== undefined && o.captureMethod !== 'automatic' && o.captureMethod !== 'manual') {
    fail(`captureMethod must be "automatic" or "manual"; got ${JSON.stringify(o.captureMethod)}.`);
  }
  if (o.returnUrl !== undefined && (typeof o.returnUrl !== 'string' || !/^https?:\/\/[^/]/.test(o.returnUrl))) {
    fail(`returnUrl must be an absolute http(s) URL; got ${JSON.stringify(o.returnUrl)}.`);
  }
  if (o.refundReason !== undefined && (typeof o.refundReason !== 'string' || !REFUND_REASONS.has(o.refundReason))) {
    fail(`refundReason must be one of ${[...REFUND_REASONS].join(', ')}; got ${JSON.stringify(o.refundReason)}.`);
  }
  for (const name of ['timeoutMs', 'maxRetries', 'webhookToleranceSeconds'] as const) {
    const value = o[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < (name === 'maxRetries' ? 0 : 1))) {
      fail(`${name} must be a ${name === 'maxRetries' ? 'non-negative' : 'positive'} number; got ${JSON.stringify(value)}.`);
    }
  }
  return o as HostedCheckoutOptions;
}
