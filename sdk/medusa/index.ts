// @hosted-checkout/medusa: the hosted checkout as a Medusa 2 payment provider. Its default export is what
// medusa-config's `resolve: '@hosted-checkout/medusa'` loads (a module provider of the payment module).
import { ModuleProvider, Modules } from '@medusajs/framework/utils';
import type { ModuleProviderExports } from '@medusajs/framework/types';
import { HostedCheckoutProviderService } from './hosted-checkout-provider.ts';

/** The module provider Medusa's payment module loads: one service, {@link HostedCheckoutProviderService}. */
const provider: ModuleProviderExports = ModuleProvider(Modules.PAYMENT, { services: [HostedCheckoutProviderService] });
export default provider;

export { HostedCheckoutProviderService, PROVIDER_IDENTIFIER } from './hosted-checkout-provider.ts';
export { checkOptions, type HostedCheckoutOptions } from './options.ts';
export { sessionStatus, type CheckoutSessionData } from './session-data.ts';
export { webhookAction } from './webhook-action.ts';
export { currencyExponent, fromMinorUnits, toMinorUnits } from './amounts.ts';
