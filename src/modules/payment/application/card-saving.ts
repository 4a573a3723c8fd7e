import type { Order } from '../../order/domain/order.entity.ts';
import type { Card } from '../domain/card.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';

/**
 * The checkout's "save this card", bound to the one payment it was asked with: the card is held for
 * that payment in the transaction that starts it (a refused submission holds nothing), vaulted for
 * the order's customer in the transaction that records that payment's success, and dropped in the
 * one that records any other end of it (declined, abandoned, canceled, reversed). No other payment
 * of the order, and no repeated answer, can save it. The payment's authorization is the card's
 * verification (docs/recurring.md).
 */
export interface CardSaving {
  /**
   * Holds the typed card (number and name, sealed; never the CVC) for the payment.
   * @throws DomainError vault.unavailable (live mode without a configured vault key)
   */
  hold(tx: TransactionScope, order: Order, paymentId: string, card: Card): Promise<void>;
  /**
   * Vaults the card held for the payment for the order's customer, if one is held. Nothing is saved
   * (and nothing thrown) for a customer deleted meanwhile, at the card limit, or who keeps the card already.
   */
  save(tx: TransactionScope, order: Order, paymentId: string): Promise<void>;
  /** Drops the card held for the payment, if any. */
  drop(tx: TransactionScope, paymentId: string): Promise<void>;
}
