import type { Caller } from '../../merchant/domain/caller.ts';
import { createPaymentLink, validateCreatePaymentLink, type CreatePaymentLinkCommand } from '../domain/create-payment-link.ts';
import { PAYMENT_LINK_ID_PREFIX, type PaymentLink } from '../domain/payment-link.entity.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';

/** Creates a payment link in the caller's transaction (an idempotent call's). */
export type CreatePaymentLinkUseCase = (tx: TransactionScope, caller: Caller, command: CreatePaymentLinkCommand) => Promise<PaymentLink>;

/**
 * Creates the link-creation use case: the order's validation rules and the link's own, a new id
 * and an unguessable URL suffix (a secret, not derived from the id), stored in `tx`.
 * @throws DomainError when the command breaks a rule; nothing is stored.
 */
export function createCreatePaymentLink(deps: { readonly ids: IdGenerator; readonly clock: Clock }): CreatePaymentLinkUseCase {
  return async (tx, caller, raw) => {
    const now = deps.clock.now();
    const command = validateCreatePaymentLink(raw, now);
    const link = createPaymentLink(command, {
      id: deps.ids.newId(PAYMENT_LINK_ID_PREFIX),
      suffix: deps.ids.newSecret(''),
      merchantId: caller.merchantId,
      livemode: caller.livemode,
      checkoutHost: caller.checkoutHost,
      now,
    });
    await tx.links.insert(link);
    return link;
  };
}
