import type { Order } from '../../order/domain/order.entity.ts';
import { takesPayment } from '../../order/domain/order-transitions.ts';
import type { PaymentInstrument } from '../../payment/application/payment-instrument.ts';
import type { CardVault } from '../../customer/ports/card-vault.port.ts';
import { cardNotFound, type CardVaultUseCases } from '../../customer/application/card-vault-use-cases.ts';
import type { CheckoutView } from './checkout-view.ts';

/** The order's customer's saved cards on the checkout: shown on the page, and paid with in one click. */
export interface CheckoutCards {
  /** The view with the customer's saved cards and the "save this card" offer (an open order naming a customer only). */
  withCards(view: CheckoutView): Promise<CheckoutView>;
  /**
   * One of the order's customer's saved cards, opened to pay with the customer present.
   * @throws ApplicationError vault.card_not_found (no such card, no customer, or no vault)
   */
  savedInstrument(order: Order, cardId: string): Promise<PaymentInstrument>;
}

/** Builds the checkout's saved cards over the vault (without one, no card is shown or found). */
export function createCheckoutCards(vault?: { readonly cards: CardVault; readonly useCases: CardVaultUseCases }): CheckoutCards {
  return {
    async withCards(view) {
      const { order } = view;
      if (!vault || !order.customerId) return view;
      const scope = { merchantId: order.merchantId, livemode: order.livemode };
      return { ...view, savedCards: takesPayment(order) ? await vault.cards.listCards(scope, order.customerId) : [], canSaveCard: takesPayment(order) };
    },
    async savedInstrument(order, cardId) {
      const scope = { merchantId: order.merchantId, livemode: order.livemode };
      const opened = vault && order.customerId ? await vault.useCases.openCard(scope, order.customerId, cardId) : undefined;
      if (!opened) throw cardNotFound(cardId, 'card_id');
      return { method: 'card', card: opened.card, saved: { cardId: opened.saved.id, offSession: false } };
    },
  };
}
