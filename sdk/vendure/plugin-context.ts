// The plugin's configuration, set by CheckoutPaymentPlugin.init() and read by the handler and the controller.
import { createCheckoutClients, type CheckoutPaymentPluginOptions } from './options.ts';
import type { HandlerContext } from './payment-handler.ts';

let current: HandlerContext | undefined;

/** Checks the options, makes the clients and keeps both for the handler and the webhook controller. */
export function configurePlugin(options: CheckoutPaymentPluginOptions): HandlerContext {
  current = { options, clients: createCheckoutClients(options) };
  return current;
}

/**
 * The configuration in force.
 * @throws Error when the plugin was added to the Vendure config without CheckoutPaymentPlugin.init().
 */
export function pluginContext(): HandlerContext {
  if (!current) throw new Error('CheckoutPaymentPlugin is not configured: add CheckoutPaymentPlugin.init({ baseUrl, secretKey, webhookSecret }) to your plugins, not the bare class.');
  return current;
}
