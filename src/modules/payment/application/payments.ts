import { createAuthenticatePayment, type AuthenticatePayment } from './authenticate-payment.ts';
import { createExpireOrders, type ExpireOrders } from './expire-orders.ts';
import { createGetPayment, type GetPayment } from './get-payment.ts';
import { createCapture, createPayOrder, type PayOrder } from './pay-order.ts';
import { createPaymentKit, type PaymentDeps, type PaymentKit } from './payment-kit.ts';
import { createReceiveTransfer, type ReceiveTransfer } from './receive-transfer.ts';
import { createRecoverPayments, type RecoverPayments } from './recover-payments.ts';
import { createReleaseAuthorizations, type ReleaseAuthorizations } from '../../capture/application/release-authorization.ts';

/** The payment use cases, over one shared kit. */
export interface Payments {
  readonly kit: PaymentKit;
  readonly payOrder: PayOrder;
  readonly authenticate: AuthenticatePayment;
  readonly receiveTransfer: ReceiveTransfer;
  readonly getPayment: GetPayment;
  /** Expires up to limit open orders past their time; answers how many it expired. */
  readonly expireDue: ExpireOrders;
  /** Settles up to limit payments left behind (abandoned, or with a reversal to retry); answers how many it took. */
  readonly recoverAttempts: RecoverPayments;
  /** Releases up to limit authorizations of manual orders not captured in time; answers how many. */
  readonly releaseAuthorizations: ReleaseAuthorizations;
}

/** Creates the payment use cases. */
export function createPayments(deps: PaymentDeps): Payments {
  const kit = createPaymentKit(deps);
  const capture = createCapture(kit);
  return {
    kit,
    payOrder: createPayOrder(kit, capture),
    authenticate: createAuthenticatePayment(kit, capture),
    receiveTransfer: createReceiveTransfer(kit),
    getPayment: createGetPayment({ payments: deps.reads.payments }),
    expireDue: createExpireOrders(kit),
    recoverAttempts: createRecoverPayments(kit),
    releaseAuthorizations: createReleaseAuthorizations(kit),
  };
}
