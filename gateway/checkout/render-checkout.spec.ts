import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { describe, expect, it } from 'vitest';
import { PaymentMethod, ReceiptSchema } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { OrderStatus } from '../../src/gen/checkout/v1/order_pb.ts';
import { messagesFor, negotiateLocale } from './i18n.ts';
import type { PageContext } from './layout.ts';
import { checkoutView, renderCheckout } from './render-checkout.ts';
import { renderPaymentPage } from './payment-page.ts';
import { SAMPLE_ASSETS, SAMPLE_NOW, sampleCheckout, type SampleOverrides } from './sample-checkout.ts';

function ctx(acceptLanguage = 'en'): PageContext {
  const locale = negotiateLocale(acceptLanguage);
  return { locale, messages: messagesFor(locale.language), assets: SAMPLE_ASSETS, now: SAMPLE_NOW };
}

const render = (overrides: SampleOverrides = {}, acceptLanguage = 'en') => renderCheckout(sampleCheckout(overrides), ctx(acceptLanguage));
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

const paid: SampleOverrides = {
  order: { status: OrderStatus.PAID, method: 'card' },
  receipt: create(ReceiptSchema, { method: 'card', cardBrand: 'visa', cardLast4: '4242', paidAt: timestampFromDate(new Date('2026-11-22T19:58:00Z')) }),
};

describe('renderCheckout: escaping', () => {
  const evil = '<script>alert("x")</script>';
  const pages: Record<string, SampleOverrides> = {
    payment: {},
    receipt: paid,
    authorized: { ...paid, order: { status: OrderStatus.AUTHORIZED, method: 'card' } },
    expired: { order: { status: OrderStatus.EXPIRED } },
    failed: { order: { status: OrderStatus.FAILED }, lastFailureMessage: evil },
  };
  for (const [page, overrides] of Object.entries(pages)) {
    it(`escapes merchant name, reference and line items on the ${page} page`, () => {
      const out = render({
        ...overrides,
        merchantName: evil,
        bankTransfer: { iban: 'DE89370400440532013000', bic: evil, accountHolder: evil, reference: evil, amount: 100n, currency: 'EUR' },
        order: { ...overrides.order, reference: evil, lineItems: [{ name: evil, amount: 100n }] },
      });
      expect(out).not.toContain('<script>alert');
      expect(out).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
      // The only script element is the page's own external one.
      expect(out.match(/<script/g)).toHaveLength(1);
    });
  }

  it('keeps quotes in attribute values from breaking out', () => {
    const out = render({ checkoutToken: '"><img src=x onerror=alert(1)>' });
    expect(out).not.toContain('<img');
    expect(out).toContain('data-token="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"');
  });

  it('links only http(s) return URLs', () => {
    expect(render({ ...paid, returnUrl: 'javascript:alert(1)' })).not.toContain('javascript:');
    expect(render({ ...paid, returnUrl: 'https://shop.example/r?a=1&b="2"' })).toContain('href="https://shop.example/r?a=1&amp;b=%222%22"');
  });
});

describe('renderCheckout: which page', () => {
  it('renders an authorized order (manual capture) as a receipt that says nothing is charged yet, never a form', () => {
    const authorized: SampleOverrides = { ...paid, order: { status: OrderStatus.AUTHORIZED, method: 'card' } };
    expect(checkoutView(sampleCheckout(authorized), SAMPLE_NOW)).toBe('receipt');
    expect(checkoutView(sampleCheckout({ order: { status: OrderStatus.AUTHORIZED } }), SAMPLE_NOW)).toBe('receipt');
    const out = render(authorized);
    expect(out).toContain('<h1>Payment authorized</h1>');
    expect(out).toContain('Nothing has been charged yet');
    expect(out).toContain('Authorized on');
    expect(out).not.toContain('<form id="card-form"');
    expect(render(authorized, 'de')).toContain('Zahlung autorisiert');
    expect(render(paid)).toContain('Payment successful');
  });

  it('renders the payment form for a pending order', () => {
    const out = render();
    expect(checkoutView(sampleCheckout(), SAMPLE_NOW)).toBe('payment');
    expect(out).toContain('<form id="card-form"');
    expect(out).toContain('<h1>Pay Bäckerei Müller</h1>');
    expect(plain(out)).toContain('Pay €1,234.56</button>');
  });

  it('renders the receipt and never a payment form once paid', () => {
    for (const overrides of [paid, { order: { status: OrderStatus.PAID } }, { receipt: paid.receipt }]) {
      const out = render(overrides);
      expect(out).toContain('<h1>Payment successful</h1>');
      expect(out).not.toMatch(/<form|<input|data-token|SubmitCardPayment/);
    }
    const out = render(paid);
    expect(out).toContain('<dd>Visa ending in 4242</dd>');
    expect(out).toContain('<dd class="mono">ord_Xy7kP2mQ9rT4vW8zA1bC3dE5</dd>');
    expect(out).toContain('datetime="2026-11-22T19:58:00.000Z"');
    expect(out).toContain('>November 22, 2026 at 7:58 PM UTC</time>');
    expect(out).toContain('<a id="return-link" class="button" href="https://shop.example/return?order_id=ord_Xy7kP2mQ9rT4vW8zA1bC3dE5&amp;reference=R-1001" data-redirect="10">Return to Bäckerei Müller</a>');
  });

  it('leaves the return link out when the merchant gave no return URL', () => {
    expect(render({ ...paid, returnUrl: '' })).not.toContain('return-link');
  });

  it('renders the expired page for status EXPIRED, or a pending order past its expiry', () => {
    for (const overrides of [{ order: { status: OrderStatus.EXPIRED } }, { expiresAt: timestampFromDate(new Date(SAMPLE_NOW.getTime() - 1000)) }]) {
      const out = render(overrides);
      expect(out).toContain('<h1>This checkout has expired</h1>');
      expect(out).not.toMatch(/<form|<input/);
    }
  });

  it('closes the page of a VOIDED order, and shows a receipt for a refunded one: no payment form for either', () => {
    const voided = render({ order: { status: OrderStatus.VOIDED } });
    expect(voided).toContain('<h1>This checkout has expired</h1>');
    expect(voided).not.toMatch(/<form|<input/);
    for (const status of [OrderStatus.PARTIALLY_REFUNDED, OrderStatus.REFUNDED]) expect(render({ ...paid, order: { ...paid.order, status } })).not.toMatch(/<form|<input/);
  });

  it('shows the last failure and the attempts left when the order FAILED', () => {
    const out = render({ order: { status: OrderStatus.FAILED }, lastFailureMessage: 'Insufficient funds.', attemptsRemaining: 2 });
    expect(out).toContain('Your last payment attempt failed: Insufficient funds.');
    expect(out).toContain('2 attempts remaining.');
    expect(out).toContain('<form id="card-form"');
    expect(render({ lastFailureMessage: 'Old failure QX' })).not.toContain('Old failure QX');
  });

  it('after a failure with many attempts left says only what failed: the counter is for the last few', () => {
    const out = render({ order: { status: OrderStatus.FAILED }, lastFailureCode: 'authentication_failed', lastFailureMessage: 'The cardholder failed 3-D Secure authentication.', attemptsRemaining: 9 });
    expect(out).toContain('<div class="notice error" id="last-failure"><p>Your last payment attempt failed: Authentication failed. Try again, or use another card.</p></div>');
    expect(out).not.toContain('9 attempts remaining');
    expect(render({ order: { status: OrderStatus.FAILED }, lastFailureMessage: 'Declined.', attemptsRemaining: 3 })).toContain('<p>3 attempts remaining.</p>');
  });

  it('offers no card or wallet attempt once attempts are exhausted, but still the bank transfer', () => {
    const out = render({ order: { status: OrderStatus.FAILED }, lastFailureMessage: 'Declined.', attemptsRemaining: 0 });
    expect(out).toContain('No more card or wallet attempts are possible for this order.');
    expect(out).not.toMatch(/card-form|wallet-pay|data-token="ctok/);
    expect(out).toContain('DE89 3704 0044 0532 0130 00');
  });
});

describe('renderCheckout: methods', () => {
  it('shows only the methods switched on', () => {
    const out = render({ methods: [PaymentMethod.BANK_TRANSFER] });
    expect(out).not.toMatch(/card-form|wallet-pay|<dialog/);
    expect(out).toContain('<dt>IBAN</dt><dd class="mono">DE89 3704 0044 0532 0130 00</dd>');
    expect(out).toContain('<dt>Reference to quote</dt><dd class="mono">HC-7KP2MQ9R</dd>');
  });

  it('offers the test wallet in test mode only, with the test-mode banner', () => {
    expect(render()).toContain('Pay with Test Wallet');
    expect(render()).toContain('<header class="test-mode">');
    const live = render({ testMode: false });
    expect(live).not.toContain('Test Wallet');
    expect(live).not.toContain('test-mode');
  });

  it('says so when no method is available', () => {
    expect(render({ methods: [] })).toContain('No payment method is available for this order. Please contact Bäckerei Müller.');
  });
});

describe('renderCheckout: language and formatting', () => {
  it('speaks German with German number formatting and sets lang', () => {
    const out = plain(render({}, 'de-DE,de;q=0.9,en;q=0.5'));
    expect(out).toMatch(/^<!doctype html>\n<html lang="de-DE">/);
    expect(out).toContain('<h1>Bäckerei Müller bezahlen</h1>');
    expect(out).toContain('<td class="num">1.234,56 €</td>');
    expect(out).toContain('1.234,56 € bezahlen</button>');
    expect(out).toContain('<label for="cc-number">Kartennummer</label>');
  });

  it('formats JPY without decimals and KWD with three', () => {
    const yen = plain(render({ order: { currency: 'JPY', amount: 1234n, lineItems: [{ name: 'Tea', amount: 1234n }] } }));
    expect(yen).toContain('<td class="num">¥1,234</td>');
    const dinar = plain(render({ order: { currency: 'KWD', amount: 1234n, lineItems: [] } }, 'de'));
    expect(dinar).toContain('<td class="num">1,234 KWD</td>');
  });
});

/** A payment link's page before any order exists: the link's suffix, no checkout id, token or bank instructions. */
const renderLink = (overrides: SampleOverrides = {}, suffix = 'Lk8sJ2nB5vC7xZ9qW1eR3tY6uI0oP4aS', acceptLanguage = 'en') =>
  renderPaymentPage(sampleCheckout({ checkoutId: '', checkoutToken: '', bankTransfer: undefined, ...overrides, order: { id: '', checkoutUrl: '', ...overrides.order } }), ctx(acceptLanguage), suffix);

describe('renderPaymentPage: a payment link\'s page', () => {
  it('carries the link\'s suffix for the script, and no checkout id or token', () => {
    const out = renderLink();
    expect(out).toContain('<main id="checkout" data-checkout-id="" data-token="" data-link="Lk8sJ2nB5vC7xZ9qW1eR3tY6uI0oP4aS" data-messages=');
    expect(out).toContain('id="card-form"');
    expect(out).toContain('Pay with Test Wallet');
  });

  it('offers the bank transfer as a button that makes the order, never an account before it exists', () => {
    const out = plain(renderLink({ methods: [PaymentMethod.BANK_TRANSFER] }, undefined, 'de'));
    expect(out).toContain('<button type="button" id="bank-start" class="wide" data-pay disabled>Bankverbindung anzeigen</button>');
    expect(out).not.toContain('IBAN');
    expect(out).toContain('data-link="Lk8sJ2nB5vC7xZ9qW1eR3tY6uI0oP4aS"');
  });

  it('escapes the suffix it is given, and gives the script nothing when nothing can be paid', () => {
    expect(renderLink({}, '"><img src=x>')).toContain('data-link="&quot;&gt;&lt;img src=x&gt;"');
    const none = renderLink({ methods: [] });
    expect(none).not.toContain('data-link');
    expect(none).toContain('No payment method is available');
  });
});

describe('renderCheckout: markup rules', () => {
  const pages = [render(), render(paid), render({ order: { status: OrderStatus.EXPIRED } }), render({ order: { status: OrderStatus.FAILED }, lastFailureMessage: 'x' }, 'de'), renderLink(), renderLink({}, undefined, 'de')];

  it('has no inline script, inline style or event handler attributes', () => {
    for (const out of pages) {
      expect(out).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(out).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    }
  });

  it('has unique ids, a main landmark with one h1, and a label for every input', () => {
    for (const out of pages) {
      const ids = [...out.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
      expect(new Set(ids).size).toBe(ids.length);
      expect(out.match(/<main/g)).toHaveLength(1);
      expect(out.match(/<h1>/g)).toHaveLength(1);
      for (const [, id] of out.matchAll(/<input id="([^"]+)"/g)) expect(out).toContain(`<label for="${id}">`);
      for (const [, refs] of out.matchAll(/aria-(?:describedby|labelledby)="([^"]+)"/g)) {
        for (const ref of refs!.split(' ')) expect(ids).toContain(ref);
      }
    }
  });

  it('gives card inputs autocomplete and numeric keyboards, and no name that a native submit would send', () => {
    const out = render();
    expect(out).toMatch(/<input id="cc-number"[^>]*inputmode="numeric"[^>]*autocomplete="cc-number"/);
    expect(out).toMatch(/<input id="cc-exp"[^>]*autocomplete="cc-exp"/);
    expect(out).toMatch(/<input id="cc-csc"[^>]*autocomplete="cc-csc"/);
    expect(out).toMatch(/<input id="cc-name"[^>]*autocomplete="cc-name"/);
    expect(out).not.toMatch(/<input[^>]*\sname=/);
    expect(out).toMatch(/<input id="cc-number"[^>]*aria-describedby="cc-brand cc-number-error"/);
  });
});
