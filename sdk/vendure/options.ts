// What a shop configures the plugin with, and the Connect clients the plugin makes of it.
import { createClient, type Client, type Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { OrderService } from '../gen/checkout/v1/order_pb.ts';
import { RefundService } from '../gen/checkout/v1/refund_pb.ts';
import type { Order } from '@vendure/core';

/** The options of `CheckoutPaymentPlugin.init()`. */
export interface CheckoutPaymentPluginOptions {
  /** Where the service answers, e.g. https://api.checkout.example (its Connect API shares the REST origin). */
  readonly baseUrl: string;
  /** The merchant's secret key (sk_test_… or sk_live_…): it authenticates every call to the service. */
  readonly secretKey: string;
  /** The signing secret (whsec_…) of the webhook endpoint registered at the plugin's route; two during a rotation. */
  readonly webhookSecret: string | readonly string[];
  /** Where the customer is sent after the hosted checkout, if anywhere (an absolute http(s) URL). */
  readonly returnUrl?: (order: Order) => string | undefined;
  /** The route of the webhook controller, under Vendure's own host. Default `checkout-webhooks`. */
  readonly webhookPath?: string;
  /** A Connect transport of your own (gRPC, a proxy, a test's router transport); by default Connect over HTTP/1.1 to baseUrl. */
  readonly transport?: Transport;
  /** Per-call timeout in ms. Default 15 000. */
  readonly timeoutMs?: number;
}

/** The Connect clients the plugin speaks to the service with. */
export interface CheckoutClients {
  readonly orders: Client<typeof OrderService>;
  readonly refunds: Client<typeof RefundService>;
  /** Call options with the secret key as bearer, and an idempotency key when given. */
  callOptions(idempotencyKey?: string): { headers: Record<string, string>; timeoutMs: number };
}

/** The default webhook route. */
export const DEFAULT_WEBHOOK_PATH = 'checkout-webhooks';

/**
 * Checks the options and makes the clients of them.
 * @throws TypeError when an option is missing or of the wrong kind, naming the likely mistake.
 */
export function createCheckoutClients(options: CheckoutPaymentPluginOptions): CheckoutClients {
  if (!options.baseUrl || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError(`CheckoutPaymentPlugin: baseUrl must be the service's absolute http(s) URL, e.g. https://api.checkout.example; got ${JSON.stringify(options.baseUrl)}.`);
  }
  if (!/^sk_(test|live)_/.test(options.secretKey ?? '')) {
    const hint = /^pk_/.test(options.secretKey ?? '') ? ' That is a publishable key: the plugin runs on your server and needs the secret one.' : ' Is the environment variable that holds it set?';
    throw new TypeError(`CheckoutPaymentPlugin: secretKey must be a secret key (sk_test_… or sk_live_…).${hint}`);
  }
  const secrets = typeof options.webhookSecret === 'string' ? [options.webhookSecret] : [...(options.webhookSecret ?? [])];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || !s.startsWith('whsec_'))) {
    throw new TypeError('CheckoutPaymentPlugin: webhookSecret must be the signing secret (whsec_…) of the endpoint registered at the plugin\'s route.');
  }
  // Connect over the global fetch (HTTP/1.1): connect-node 2.2 needs Node 22, Vendure 3 runs from Node 20.
  const transport = options.transport ?? createConnectTransport({ baseUrl: options.baseUrl.replace(/\/+$/, '') });
  const timeoutMs = options.timeoutMs ?? 15_000;
  return {
    orders: createClient(OrderService, transport),
    refunds: createClient(RefundService, transport),
    callOptions(idempotencyKey) {
      const headers: Record<string, string> = { authorization: `Bearer ${options.secretKey}` };
      if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
      return { headers, timeoutMs };
    },
  };
}
