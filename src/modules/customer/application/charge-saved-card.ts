import type { Caller } from '../../merchant/domain/caller.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import { invalid } from '../../../kernel/domain/domain-error.ts';
import type { CustomerRepository } from '../ports/customer-repository.port.ts';
import type { PayOrder } from '../../payment/application/pay-order.ts';
import type { PaymentOutcome } from '../../payment/application/payment-outcome.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { CardVaultUseCases } from './card-vault-use-cases.ts';

/** What POST /v1/orders asks of a customer and a saved card. */
export interface OrderCustomerRequest {
  readonly customerId: string | undefined;
  readonly cardId: string | undefined;
  readonly confirm: boolean;
}

/** A checked request: the saved card to charge, opened, when confirm was set. */
export interface PreparedCharge {
  /** Charges the order once created; a repeat (same order) answers the first charge's outcome. */
  charge(order: Order): Promise<PaymentOutcome>;
}

/** Checks an order's customer and card before the order is created, and charges the card after. */
export type PrepareOrderCharge = (caller: Caller, request: OrderCustomerRequest) => Promise<PreparedCharge | undefined>;

/** The submission id of an order's off-session charge: one per order, so a retried create charges once. */
export const OFF_SESSION_SUBMISSION = 'off_session';

/**
 * Creates the off-session charge of POST /v1/orders with customer, card and confirm: the customer
 * and the card are checked to be the caller's first (nothing is created otherwise), then the card is
 * charged through the payment engine exactly as a checkout payment, merchant-initiated (no client
 * address, no challenge: a card that asks for one declines with authentication_required).
 * @throws ApplicationError order.customer_unknown, order.card_unknown; DomainError for a card without confirm
 */
export function createPrepareOrderCharge(deps: { readonly customers: CustomerRepository; readonly vault: CardVaultUseCases; readonly payOrder: PayOrder }): PrepareOrderCharge {
  return async (caller, request) => {
    if (request.cardId !== undefined && !request.confirm) {
      throw invalid('request.parameter_invalid', 'confirm', 'card is charged only with confirm: true; leave card out to let the customer pay on the checkout page.');
    }
    if (request.confirm && request.cardId === undefined) throw invalid('request.parameter_missing', 'card', 'confirm: true needs card, a saved card (card_…) of the customer.');
    if ((request.confirm || request.cardId !== undefined) && request.customerId === undefined) {
      throw invalid('request.parameter_missing', 'customer', 'A saved card is charged for its customer: send customer (cus_…) with card.');
    }
    if (request.customerId === undefined) return undefined;
    const customer = request.customerId.startsWith('cus_') ? await deps.customers.findById(caller, request.customerId) : undefined;
    if (!customer) throw new ApplicationError('order.customer_unknown', `No such customer: "${request.customerId.slice(0, 60)}".`, 'customer');
    if (!request.confirm || request.cardId === undefined) return undefined;
    const opened = await deps.vault.openCard(caller, customer.id, request.cardId);
    if (!opened) throw new ApplicationError('order.card_unknown', `No such card for customer ${customer.id}: "${request.cardId.slice(0, 60)}".`, 'card');
    return {
      charge: (order) =>
        deps.payOrder({
          orderId: order.id,
          authorize: (locked) => {
            if (locked.merchantId !== caller.merchantId || locked.livemode !== caller.livemode) throw new ApplicationError('order.not_found', `No such order: "${order.id}".`);
          },
          submissionId: OFF_SESSION_SUBMISSION,
          instrument: { method: 'card', card: opened.card, saved: { cardId: opened.saved.id, offSession: true } },
          client: { address: undefined },
        }),
    };
  };
}
