import { CHECKOUT_ERRORS } from './errors.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { createCheckoutService } from './application/checkout-service.ts';
import { createCheckoutCards } from './application/checkout-cards.ts';
import { createGetCheckout } from './application/get-checkout.ts';
import type { OrderRepository } from '../order/ports/order-repository.port.ts';
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

/** Wires CheckoutService over the payment use cases and the vault; no key: the checkout id and token are the credential. */
export function wireCheckout(
  context: ModuleContext,
  deps: { readonly payments: Payments; readonly orders: OrderRepository; readonly cards: CardVault; readonly vault: CardVaultUseCases },
): ModuleWiring {
  const cards = createCheckoutCards({ cards: deps.cards, useCases: deps.vault });
  const service = createCheckoutService({
    getCheckout: createGetCheckout({ ...deps.payments.parts, cards }),
    payOrder: deps.payments.payOrder,
    authenticatePayment: deps.payments.authenticate,
    cards,
    orders: deps.orders,
    clock: context.clock,
    authenticate: context.authenticate,
  });
  return { services: [connectService(CheckoutService, service, 'none')] };
}
