import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { PaymentAttemptSchema, type PaymentAttempt as ProtoPaymentAttempt } from '../../../gen/checkout/v1/order_pb.ts';
import type { PaymentAttempt } from '../domain/payment-attempt.entity.ts';

/** Maps a payment attempt to its proto message. */
export function attemptToProto(attempt: PaymentAttempt): ProtoPaymentAttempt {
  return create(PaymentAttemptSchema, {
    id: attempt.id,
    method: attempt.method,
    route: attempt.route,
    status: attempt.status,
    declineCode: attempt.declineCode ?? '',
    authentication: attempt.authentication,
    cardBrand: attempt.cardBrand ?? '',
    cardLast4: attempt.cardLast4 ?? '',
    retry: attempt.retry,
    cardId: attempt.savedCardId ?? '',
    created: timestampFromDate(attempt.createdAt),
  });
}
