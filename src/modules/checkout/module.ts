import { CHECKOUT_ERRORS } from './errors.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { createCheckoutService } from './application/checkout-service.ts';
import { createCheckoutPayments } from './application/checkout-payments.ts';
import type { Payments } from '../payment/application/payments.ts';
import type { CardVault } from '../customer/ports/card-vault.port.ts';
import type { CardVaultUseCases } from '../customer/application/card-vault-use-cases.ts';
import { CheckoutService } from '../../gen/checkout/v1/checkout_pb.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';

/** The checkout module's parts for the composition root: its error codes' mappings. */
export const CHECKOUT_MODULE = {
  name: 'checkout',
  errors: CHECKOUT_ERRORS,
} satisfies ModuleManifest;

/** Wires CheckoutService over the payment engine and the vault; no key: the checkout id and token are the credential. */
export function wireCheckout(context: ModuleContext, deps: { readonly payments: Payments; readonly cards: CardVault; readonly vault: CardVaultUseCases }): ModuleWiring {
  const engine = createCheckoutPayments(deps.payments, { cards: deps.cards, useCases: deps.vault });
  return { services: [connectService(CheckoutService, createCheckoutService({ engine, clock: context.clock, authenticate: context.authenticate }), 'none')] };
}
