import type { Order } from '../../order/domain/order.entity.ts';
import type { PaymentChange } from '../domain/payment.entity.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { CardSaving } from './card-saving.ts';

/** The card a payment's submission asked to save: vaulted with the payment's success, dropped with any other end. */
export interface HeldCard {
  /** Drops the card held for the payment, in the transaction that records it ending without success. */
  drop(tx: TransactionScope, change: PaymentChange): Promise<void>;
  /** Vaults the card held for a payment that has just succeeded, in the transaction recording it (only an order naming a customer holds one). */
  save(tx: TransactionScope, order: Order, change: PaymentChange): Promise<void>;
}

/** Builds the held card's two ends over the checkout's card saving (without it, nothing is ever held). */
export function createHeldCard(cardSaving: CardSaving | undefined): HeldCard {
  /** Whether a payment may have a card held to save: a typed card's (a saved card's or a wallet's never). */
  const mayHold = (change: PaymentChange) => cardSaving !== undefined && change.payment.method === 'card' && !change.leg.savedCardId;
  return {
    async drop(tx, change) {
      if (mayHold(change)) await cardSaving!.drop(tx, change.payment.id);
    },
    async save(tx, order, change) {
      if (order.customerId && mayHold(change)) await cardSaving!.save(tx, order, change.payment.id);
    },
  };
}
