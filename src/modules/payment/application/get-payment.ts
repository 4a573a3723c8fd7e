import type { Scope } from '../../merchant/domain/caller.ts';
import type { PaymentRecord } from '../domain/payment.entity.ts';
import type { PaymentRepository } from '../ports/payment-repository.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';

/** Reads one payment of the caller's merchant and mode, with its attempts and its capture. */
export type GetPayment = (scope: Scope, paymentId: string) => Promise<PaymentRecord>;

/** Creates the payment-retrieval use case; another merchant's or mode's id is answered as an unknown one. */
export function createGetPayment(deps: { readonly payments: PaymentRepository }): GetPayment {
  return async (scope, paymentId) => {
    const found = await deps.payments.findById(scope, paymentId);
    if (!found) throw new ApplicationError('payment.not_found', `No such payment: "${paymentId}".`, 'id');
    return found;
  };
}
