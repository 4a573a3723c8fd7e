// The Vendure plugin: registers the payment handler, the webhook route and its raw-body middleware.
import { PluginCommonModule, VendurePlugin, type Type } from '@vendure/core';
import { DEFAULT_WEBHOOK_PATH, type CheckoutPaymentPluginOptions } from './options.ts';
import { createCheckoutPaymentHandler } from './payment-handler.ts';
import { configurePlugin, pluginContext } from './plugin-context.ts';
import { checkoutRawBody } from './raw-body.ts';
import { CheckoutWebhookController, setWebhookPath } from './webhook-controller.ts';

/** The payment handler (code `checkout-hosted`): create a PaymentMethod with it, in the admin or in initial data. */
export const checkoutPaymentHandler = createCheckoutPaymentHandler(pluginContext);

/**
 * Pays Vendure orders through the hosted checkout service, over Connect:
 * `plugins: [CheckoutPaymentPlugin.init({ baseUrl, secretKey, webhookSecret })]`.
 */
export class CheckoutPaymentPlugin {
  /**
   * Configures the plugin; answers the class to put in `plugins`.
   * @throws TypeError when an option is missing or wrong (a publishable key for the secret one, say).
   */
  static init(options: CheckoutPaymentPluginOptions): Type<CheckoutPaymentPlugin> {
    configurePlugin(options);
    webhookPath = trimSlashes(options.webhookPath ?? DEFAULT_WEBHOOK_PATH);
    setWebhookPath(webhookPath);
    return CheckoutPaymentPlugin;
  }
}

let webhookPath = DEFAULT_WEBHOOK_PATH;

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

VendurePlugin({
  imports: [PluginCommonModule],
  controllers: [CheckoutWebhookController],
  configuration: (config) => {
    config.paymentOptions.paymentMethodHandlers.push(checkoutPaymentHandler);
    // Before Nest's JSON parser: the verifier needs the bytes as sent.
    config.apiOptions.middleware.push({ route: `/${webhookPath}`, handler: checkoutRawBody, beforeListen: true });
    return config;
  },
  compatibility: '^3.0.0',
})(CheckoutPaymentPlugin);
