// The Vendure payment plugin of the hosted checkout: entry point.
export { CheckoutPaymentPlugin, checkoutPaymentHandler } from './checkout-payment-plugin.ts';
export { CHECKOUT_HANDLER_CODE } from './payment-handler.ts';
export { DEFAULT_WEBHOOK_PATH, type CheckoutPaymentPluginOptions } from './options.ts';
export { CheckoutWebhookController } from './webhook-controller.ts';
