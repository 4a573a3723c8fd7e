import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { CheckoutSchema, PaymentMethod, type Checkout } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { OrderStatus, type Order, type OrderSchema } from '../../src/gen/checkout/v1/order_pb.ts';
import type { AssetUrls } from './layout.ts';

/** The instant sample checkouts are rendered at. */
export const SAMPLE_NOW = new Date('2026-11-22T20:00:00Z');

/** Asset links for renders outside the server. */
export const SAMPLE_ASSETS: AssetUrls = { script: '/c/assets/checkout-000000000000.js', style: '/c/assets/checkout-000000000000.css' };

/** Fields of {@link sampleCheckout} to override; `order` fields are merged into the sample order. */
export type SampleOverrides = Omit<Exclude<MessageInitShape<typeof CheckoutSchema>, Checkout>, 'order'> & {
  order?: Exclude<MessageInitShape<typeof OrderSchema>, Order>;
};

/**
 * A pending test-mode checkout with every method switched on, three line
 * items and bank transfer instructions (for unit tests and the page benchmark).
 */
export function sampleCheckout(overrides: SampleOverrides = {}): Checkout {
  const { order, ...rest } = overrides;
  return create(CheckoutSchema, {
    checkoutId: 'Xy7kP2mQ9rT4vW8zA1bC3dE5',
    merchantName: 'Bäckerei Müller',
    methods: [PaymentMethod.CARD, PaymentMethod.WALLET, PaymentMethod.BANK_TRANSFER],
    bankTransfer: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', accountHolder: 'Checkout Test GmbH', reference: 'HC-7KP2MQ9R', amount: 123456n, currency: 'EUR' },
    expiresAt: timestampFromDate(new Date('2026-11-23T20:00:00Z')),
    attemptsRemaining: 5,
    returnUrl: 'https://shop.example/return?order_id=ord_Xy7kP2mQ9rT4vW8zA1bC3dE5&reference=R-1001',
    checkoutToken: 'ctok_sample',
    testMode: true,
    ...rest,
    order: {
      id: 'ord_Xy7kP2mQ9rT4vW8zA1bC3dE5',
      reference: 'R-1001',
      amount: 123456n,
      currency: 'EUR',
      status: OrderStatus.PENDING,
      checkoutUrl: 'https://pay.example/c/Xy7kP2mQ9rT4vW8zA1bC3dE5',
      lineItems: [
        { name: 'Sourdough loaf', amount: 450n },
        { name: 'Wedding cake, three tiers', amount: 120000n },
        { name: 'Delivery', amount: 2006n },
      ],
      livemode: false,
      ...order,
    },
  });
}
