import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { CardTokenSchema, CustomerSchema, SavedCardSchema, type CardToken as ProtoCardToken, type Customer as ProtoCustomer, type SavedCard as ProtoSavedCard } from '../../../gen/checkout/v1/customer_pb.ts';
import type { Customer } from '../domain/customer.entity.ts';
import type { CardToken, SavedCard } from '../domain/saved-card.ts';

/** Maps a customer to its proto message. */
export function customerToProto(customer: Customer): ProtoCustomer {
  return create(CustomerSchema, {
    id: customer.id,
    email: customer.email ?? '',
    name: customer.name ?? '',
    reference: customer.reference ?? '',
    metadata: { ...customer.metadata },
    livemode: customer.livemode,
    created: timestampFromDate(customer.createdAt),
    testClock: customer.testClockId ?? undefined,
  });
}

/** Maps a saved card to its proto message: brand, last four, expiry and fingerprint, never more. */
export function savedCardToProto(card: SavedCard): ProtoSavedCard {
  return create(SavedCardSchema, {
    id: card.id,
    customerId: card.customerId,
    brand: card.brand,
    last4: card.last4,
    expMonth: card.expMonth,
    expYear: card.expYear,
    fingerprint: card.fingerprint,
    livemode: card.livemode,
    created: timestampFromDate(card.createdAt),
  });
}

/** Maps a card token to its proto message. */
export function cardTokenToProto(token: CardToken): ProtoCardToken {
  return create(CardTokenSchema, {
    id: token.id,
    brand: token.brand,
    last4: token.last4,
    expMonth: token.expMonth,
    expYear: token.expYear,
    livemode: token.livemode,
    created: timestampFromDate(token.createdAt),
    expiresAt: timestampFromDate(token.expiresAt),
  });
}
