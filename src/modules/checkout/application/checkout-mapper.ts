import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import {
  CheckoutSchema,
  PaymentMethod as ProtoPaymentMethod,
  PaymentOutcomeSchema,
  PaymentStatus,
  type Checkout,
  type PaymentOutcome,
} from '../../../gen/checkout/v1/checkout_pb.ts';
import type { PaymentMethod } from '../../payment/domain/payment-attempt.entity.ts';
import { orderToProto } from '../../order/application/order-mapper.ts';
import { savedCardToProto } from '../../customer/application/customer-mapper.ts';
import type { CheckoutView } from './checkout-view.ts';
import type { PaymentResult } from './payment-result.ts';

/** Each payment method's proto value. */
export const METHOD_TO_PROTO: { readonly [M in PaymentMethod]: ProtoPaymentMethod } = {
  card: ProtoPaymentMethod.CARD,
  wallet: ProtoPaymentMethod.WALLET,
  bank_transfer: ProtoPaymentMethod.BANK_TRANSFER,
};

const STATUS_TO_PROTO: { readonly [S in PaymentResult['status']]: PaymentStatus } = {
  succeeded: PaymentStatus.SUCCEEDED,
  requires_authentication: PaymentStatus.REQUIRES_AUTHENTICATION,
  failed: PaymentStatus.FAILED,
};

/**
 * Maps the checkout view to its proto message. The checkout token (which pays the order for as long
 * as it lives) only `withToken`: for the hosted page's own render; empty otherwise.
 */
export function checkoutToProto(view: CheckoutView, options: { readonly withToken: boolean } = { withToken: false }): Checkout {
  return create(CheckoutSchema, {
    checkoutId: view.checkoutId,
    merchantName: view.merchantName,
    order: orderToProto(view.order, view.attempts),
    methods: view.methods.map((m) => METHOD_TO_PROTO[m]),
    bankTransfer: view.bankTransfer,
    expiresAt: timestampFromDate(view.order.expiresAt),
    receipt: view.receipt ? { ...view.receipt, paidAt: timestampFromDate(view.receipt.paidAt) } : undefined,
    lastFailureMessage: view.lastFailureMessage,
    lastFailureCode: view.lastFailureCode,
    attemptsRemaining: view.attemptsRemaining,
    returnUrl: view.returnUrl,
    checkoutToken: options.withToken ? view.checkoutToken : '',
    testMode: view.testMode,
    // The page shows brand, last four and expiry; the fingerprint is the merchant's business.
    savedCards: (view.savedCards ?? []).map((card) => savedCardToProto({ ...card, fingerprint: '' })),
    canSaveCard: view.canSaveCard ?? false,
  });
}

/** Maps a payment result to its proto outcome: the checkout as it now stands, without the token (the caller pays with what it has). */
export function outcomeToProto(result: PaymentResult): PaymentOutcome {
  return create(PaymentOutcomeSchema, {
    status: STATUS_TO_PROTO[result.status],
    checkout: checkoutToProto(result.view),
    challenge: result.challenge && {
      attemptId: result.challenge.attemptId,
      testCode: result.challenge.testCode ?? '',
      hint: result.challenge.testCode ? `Test mode: enter ${result.challenge.testCode} to pass the check, anything else to fail it.` : '',
      redirectUrl: result.challenge.redirect?.url ?? '',
      redirectMethod: result.challenge.redirect?.method ?? '',
      redirectFields: { ...result.challenge.redirect?.fields },
    },
    declineCode: result.declineCode ?? '',
    message: result.status === 'failed' ? result.view.lastFailureMessage : '',
  });
}
