import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { CardToken, Customer, SavedCard } from '../../../src/gen/checkout/v1/customer_pb.ts';

const iso = (ts: Timestamp | undefined) => (ts ? timestampDate(ts).toISOString() : '');

/** Maps a proto customer to its REST JSON. */
export function customerJson(customer: Customer) {
  return {
    id: customer.id,
    object: 'customer' as const,
    email: customer.email || null,
    name: customer.name || null,
    reference: customer.reference || null,
    metadata: { ...customer.metadata },
    livemode: customer.livemode,
    test_clock: customer.testClock ?? null,
    created: iso(customer.created),
  };
}

/** Maps a proto saved card to its REST JSON: never more than the last four digits. */
export function savedCardJson(card: SavedCard) {
  return {
    id: card.id,
    object: 'card' as const,
    customer: card.customerId,
    brand: card.brand,
    last4: card.last4,
    exp_month: card.expMonth,
    exp_year: card.expYear,
    fingerprint: card.fingerprint,
    livemode: card.livemode,
    created: iso(card.created),
  };
}

/** Maps a proto card token to its REST JSON. */
export function cardTokenJson(token: CardToken) {
  return {
    id: token.id,
    object: 'token' as const,
    card: { brand: token.brand, last4: token.last4, exp_month: token.expMonth, exp_year: token.expYear },
    livemode: token.livemode,
    created: iso(token.created),
    expires_at: iso(token.expiresAt),
  };
}
