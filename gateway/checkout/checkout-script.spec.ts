import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ReceiptSchema } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { OrderStatus } from '../../src/gen/checkout/v1/order_pb.ts';
import { fewAttemptsLeft, messagesFor, negotiateLocale } from './i18n.ts';
import { renderCheckout } from './render-checkout.ts';
import { renderPaymentPage } from './payment-page.ts';
import { SAMPLE_ASSETS, SAMPLE_NOW, sampleCheckout, type SampleOverrides } from './sample-checkout.ts';

const SCRIPT = readFileSync(new URL('./assets/checkout.js', import.meta.url), 'utf8');

/** The script's top-level functions, from a run without a document (so it does not start). */
function pureFunctions() {
  const context = vm.createContext({});
  vm.runInContext(SCRIPT, context);
  return context as unknown as {
    luhn(n: string): boolean;
    detectBrand(n: string): string;
    numberError(v: string): string;
    parseExpiry(v: string): { month: number; year: number } | null;
    expiryError(v: string, now: Date): string;
    cvcLength(n: string): number;
    groupDigits(n: string): string;
  };
}

describe('card checks', () => {
  const f = pureFunctions();

  it('tells the attempts left only when few are, by the same rule as the server', () => {
    const script = vm.createContext({});
    vm.runInContext(SCRIPT, script);
    const fewInScript = (script as unknown as { fewAttemptsLeft(n: number): boolean }).fewAttemptsLeft;
    for (let left = 0; left <= 12; left++) expect(fewInScript(left), `${left} left`).toBe(fewAttemptsLeft(left));
    expect([0, 1, 3, 4, 9].map(fewAttemptsLeft)).toEqual([false, true, true, false, false]);
  });

  it('checks the Luhn sum and the length of the brand', () => {
    expect(['4242424242424242', '5555555555554444', '378282246310005', '6011111111111117', '2223003122003222'].map(f.numberError)).toEqual(['', '', '', '', '']);
    expect(f.numberError('4242 4242 4242 4242')).toBe('');
    expect(f.numberError('4242424242424241')).toBe('numberInvalid');
    expect(f.numberError('42424242424242424')).toBe('numberInvalid');
    expect(f.numberError('4242-abcd')).toBe('numberInvalid');
    expect(f.numberError('  ')).toBe('numberRequired');
    expect(f.luhn('79927398713')).toBe(false); // valid Luhn but too short for a card
  });

  it('detects brands by their prefixes', () => {
    const brands = ['4111', '51', '55', '2221', '2720', '2721', '34', '37', '6011', '65', '36', '2220'].map(f.detectBrand);
    expect(brands).toEqual(['visa', 'mastercard', 'mastercard', 'mastercard', 'mastercard', '', 'amex', 'amex', 'discover', 'discover', '', '']);
    expect([f.cvcLength('3782 822463 10005'), f.cvcLength('4242'), f.cvcLength('')]).toEqual([4, 3, 3]);
    expect(f.groupDigits('378282246310005')).toBe('3782 822463 10005');
    expect(f.groupDigits('4242424242424242')).toBe('4242 4242 4242 4242');
  });

  it('takes MM/YY expiry dates that are not in the past', () => {
    const now = new Date(2026, 10, 22);
    expect(f.parseExpiry('04/29')).toEqual({ month: 4, year: 2029 });
    expect(f.parseExpiry('4 / 2029')).toEqual({ month: 4, year: 2029 });
    expect(f.parseExpiry('0429')).toEqual({ month: 4, year: 2029 });
    expect(f.parseExpiry('13/29')).toBeNull();
    expect(f.expiryError('11/26', now)).toBe('');
    expect(f.expiryError('10/26', now)).toBe('expiryPast');
    expect(f.expiryError('1/2', now)).toBe('expiryInvalid');
  });
});

// ---------------------------------------------------------------- a minimal DOM, built from the rendered page

type Listener = (event: FakeEvent) => void;
interface FakeEvent {
  type: string;
  target: FakeElement;
  defaultPrevented: boolean;
  preventDefault(): void;
}

class FakeElement {
  value = '';
  textContent = '';
  className = '';
  disabled: boolean;
  hidden: boolean;
  open = false;
  maxLength = -1;
  readonly dataset: Record<string, string> = {};
  readonly id: string;
  private readonly dom: FakeDom;
  private readonly attributes: Map<string, string>;
  private readonly listeners = new Map<string, Listener[]>();

  constructor(dom: FakeDom, id: string, attributes: Map<string, string>) {
    this.dom = dom;
    this.id = id;
    this.attributes = attributes;
    this.disabled = attributes.has('disabled');
    this.hidden = attributes.has('hidden');
    for (const [name, value] of attributes) {
      if (name.startsWith('data-')) this.dataset[name.slice(5).replace(/-(\w)/g, (_, c: string) => c.toUpperCase())] = value;
    }
  }

  get href(): string {
    return this.attributes.get('href') ?? '';
  }
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }
  hasAttribute(name: string): boolean {
    return this.attributes.has(name);
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  removeAttribute(name: string): void {
    this.attributes.delete(name);
  }
  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  dispatch(type: string, target: FakeElement = this): FakeEvent {
    const event: FakeEvent = { type, target, defaultPrevented: false, preventDefault: () => void (event.defaultPrevented = true) };
    for (const listener of this.listeners.get(type) ?? []) listener(event);
    return event;
  }
  focus(): void {
    this.dom.activeElement = this;
  }
  showModal(): void {
    this.open = true;
  }
  close(): void {
    this.open = false;
    setTimeout(() => this.dispatch('close'), 0);
  }
}

class FakeDom {
  activeElement: FakeElement | undefined;
  readonly byId = new Map<string, FakeElement>();
  readonly lang: string;

  constructor(page: string) {
    this.lang = /<html lang="([^"]+)"/.exec(page)![1]!;
    const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    for (const [, attrs] of page.matchAll(/<\w+((?:\s+[\w-]+(?:="[^"]*")?)*)\s*>/g)) {
      const attributes = new Map([...attrs!.matchAll(/([\w-]+)(?:="([^"]*)")?/g)].map((m) => [m[1]!, unescape(m[2] ?? '')]));
      const id = attributes.get('id');
      if (id) this.byId.set(id, new FakeElement(this, id, attributes));
    }
  }

  el(id: string): FakeElement {
    const element = this.byId.get(id);
    if (!element) throw new Error(`no #${id}`);
    return element;
  }

  /** Forms the script built and submitted (a redirect by POST), with their inputs. */
  readonly appended: Array<{ tag: string; method?: string; action?: string; children: Array<Record<string, string>>; submitted: number }> = [];

  document() {
    const createElement = (tag: string) => {
      const node = {
        tag,
        children: [] as Array<Record<string, string>>,
        submitted: 0,
        appendChild(child: Record<string, string>) {
          node.children.push(child);
        },
        submit() {
          node.submitted += 1;
        },
      };
      return node;
    };
    return {
      createElement,
      body: { appendChild: (node: FakeDom['appended'][number]) => this.appended.push(node) },
      documentElement: { lang: this.lang },
      getElementById: (id: string) => this.byId.get(id) ?? null,
      querySelectorAll: (selector: string) => {
        if (selector === '[data-pay], #challenge button') return [...this.byId.values()].filter((e) => e.hasAttribute('data-pay') || /^challenge-(submit|cancel)$/.test(e.id));
        if (selector === 'time[data-local]') return [];
        // Saved cards' buttons (an order naming a customer); this page has none.
        if (selector === '[data-saved-card]') return [...this.byId.values()].filter((e) => e.hasAttribute('data-saved-card'));
        throw new Error(`unexpected selector ${selector}`);
      },
    };
  }
}

interface FetchCall {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  respond(status: number, body: unknown): void;
  fail(): void;
}

/**
 * Loads a rendered page into the fake DOM and runs the script on it, with fetch answered by the test.
 * With `link`, the page of a payment link (its suffix) before any order exists.
 */
function runPage(overrides: SampleOverrides = {}, acceptLanguage = 'en', link?: string) {
  const locale = negotiateLocale(acceptLanguage);
  const ctx = { locale, messages: messagesFor(locale.language), assets: SAMPLE_ASSETS, now: SAMPLE_NOW };
  const page = link === undefined ? renderCheckout(sampleCheckout(overrides), ctx) : renderPaymentPage(sampleCheckout(overrides), ctx, link);
  const dom = new FakeDom(page);
  const fetches: FetchCall[] = [];
  const location = { reload: vi.fn(), assign: vi.fn() };
  const history = { replaceState: vi.fn() };
  const fetch = (url: string, init: { headers: Record<string, string>; body: string }) =>
    new Promise((resolve, reject) => {
      fetches.push({
        url,
        headers: init.headers,
        body: JSON.parse(init.body),
        respond: (status, body) => resolve({ ok: status === 200, status, json: async () => body }),
        fail: () => reject(new TypeError('Failed to fetch')),
      });
    });
  const context = vm.createContext({
    document: dom.document(),
    location,
    history,
    fetch,
    crypto: globalThis.crypto,
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (t: ReturnType<typeof setTimeout>) => clearTimeout(t),
  });
  vm.runInContext(SCRIPT, context);
  const el = (id: string) => dom.el(id);
  const type = (id: string, value: string) => {
    el(id).value = value;
    el('card-form').dispatch('input', el(id));
  };
  const fillCard = (number = '4242 4242 4242 4242') => {
    type('cc-number', number);
    type('cc-exp', '12/30');
    type('cc-csc', number.startsWith('3') ? '1234' : '123');
    type('cc-name', 'Ada Lovelace');
  };
  const submit = () => el('card-form').dispatch('submit');
  return { dom, el, type, fillCard, submit, fetches, location, history };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));
const outcome = (status: string, extra: Record<string, unknown> = {}) => ({ outcome: { status, ...extra } });

describe('the payment page script', () => {
  it('enables the pay buttons once it runs', () => {
    const { el } = runPage();
    expect(el('card-submit').disabled).toBe(false);
    expect(el('wallet-pay').disabled).toBe(false);
  });

  it('marks invalid fields, ties the errors to them, and focuses the first', () => {
    const { el, dom, submit, type, fetches } = runPage();
    type('cc-number', '4242 4242 4242 4241');
    type('cc-exp', '01/20');
    expect(submit().defaultPrevented).toBe(true);
    expect(fetches).toHaveLength(0);
    expect(el('cc-number').getAttribute('aria-invalid')).toBe('true');
    expect(el('cc-number-error').textContent).toBe('This card number is not valid. Check the digits.');
    expect(el('cc-exp-error').textContent).toBe('This card has expired.');
    expect(el('cc-csc-error').textContent).toBe('Enter the 3-digit security code.');
    expect(el('cc-name-error').textContent).toBe('Enter the name as it appears on the card.');
    expect(el('card-status').textContent).toBe('Please correct the highlighted fields.');
    expect(dom.activeElement?.id).toBe('cc-number');
    type('cc-number', '4242424242424242');
    expect(el('cc-number').getAttribute('aria-invalid')).toBeNull();
    expect(el('cc-number-error').textContent).toBe('');
  });

  it('asks American Express cards for four CVC digits and shows the brand', () => {
    const { el, type } = runPage();
    type('cc-number', '3782 822463 10005');
    expect(el('cc-brand').textContent).toBe('American Express');
    expect(el('cc-csc').maxLength).toBe(4);
  });

  it('posts Connect JSON once per submission, with the checkout token, and ignores a double click', async () => {
    const { el, fillCard, submit, fetches, location } = runPage();
    fillCard();
    submit();
    submit();
    expect(fetches).toHaveLength(1);
    const [call] = fetches;
    expect(call!.url).toBe('/checkout.v1.CheckoutService/SubmitCardPayment');
    expect(call!.headers).toEqual({ 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1', 'checkout-token': 'ctok_sample' });
    expect(call!.body).toEqual({
      checkoutId: 'Xy7kP2mQ9rT4vW8zA1bC3dE5',
      submissionId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      card: { number: '4242424242424242', expMonth: 12, expYear: 2030, cvc: '123', name: 'Ada Lovelace' },
    });
    expect(el('card-submit').disabled).toBe(true);
    expect(el('wallet-pay').disabled).toBe(true);
    call!.respond(200, outcome('PAYMENT_STATUS_SUCCEEDED'));
    await flush();
    expect(location.reload).toHaveBeenCalledOnce();
    expect(el('card-submit').disabled).toBe(true);
  });

  it('repeats the submission id when the same submission is retried, and makes a new one for changed details', async () => {
    const { el, fillCard, submit, type, fetches } = runPage();
    fillCard();
    submit();
    fetches[0]!.fail();
    await flush();
    expect(el('card-status').textContent).toMatch(/could not be reached/);
    expect(el('card-submit').disabled).toBe(false);
    submit();
    fetches[1]!.respond(503, { code: 'unavailable', message: 'down' });
    await flush();
    submit();
    expect(fetches[2]!.body.submissionId).toBe(fetches[0]!.body.submissionId);
    expect(fetches[1]!.body.submissionId).toBe(fetches[0]!.body.submissionId);
    fetches[2]!.respond(502, '<html>bad gateway</html>');
    await flush();
    type('cc-name', 'Ada King');
    submit();
    expect(fetches[3]!.body.submissionId).not.toBe(fetches[0]!.body.submissionId);
  });

  it('shows a decline in the customer language, clears number and CVC, and allows a new attempt', async () => {
    const { el, dom, fillCard, submit, fetches } = runPage({}, 'de');
    fillCard();
    submit();
    fetches[0]!.respond(200, outcome('PAYMENT_STATUS_FAILED', { declineCode: 'insufficient_funds', message: 'Insufficient funds.', checkout: { attemptsRemaining: 2 } }));
    await flush();
    expect(el('card-status').textContent).toBe('Die Karte ist nicht ausreichend gedeckt. Versuchen Sie es mit einer anderen Karte. Noch 2 Versuche.');
    expect(el('card-status').className).toBe('status error');
    expect([el('cc-number').value, el('cc-csc').value, el('cc-name').value]).toEqual(['', '', 'Ada Lovelace']);
    expect(dom.activeElement?.id).toBe('cc-number');
    fillCard('5555555555554444');
    submit();
    expect(fetches).toHaveLength(2);
    expect(fetches[1]!.body.submissionId).not.toBe(fetches[0]!.body.submissionId);
  });

  it('locks card and wallet when no attempts remain', async () => {
    const { el, fillCard, submit, fetches } = runPage();
    fillCard();
    submit();
    fetches[0]!.respond(200, outcome('PAYMENT_STATUS_FAILED', { declineCode: 'card_declined', checkout: {} }));
    await flush();
    expect(el('card-status').textContent).toMatch(/Too many attempts/);
    expect(el('card-submit').disabled).toBe(true);
    expect(el('wallet-pay').disabled).toBe(true);
  });

  it('shows the card-testing limit as a wait, and keeps the form usable', async () => {
    const { el, fillCard, submit, fetches } = runPage({}, 'de');
    fillCard();
    submit();
    fetches[0]!.respond(429, { code: 'resource_exhausted', message: 'Too many', details: [{ type: 'checkout.v1.ErrorDetail', value: '', debug: { code: 'too_many_payment_attempts' } }] });
    await flush();
    expect(el('card-status').textContent).toBe('Zu viele Zahlungsversuche in kurzer Zeit. Bitte warten Sie einige Minuten und versuchen Sie es dann erneut.');
    expect(el('card-submit').disabled).toBe(false);
    expect(el('wallet-pay').disabled).toBe(false);
  });

  it('shows the test-mode challenge hint in the page language, around the code the core sends', async () => {
    const { el, fillCard, submit, fetches } = runPage({}, 'de');
    fillCard();
    submit();
    fetches[0]!.respond(200, outcome('PAYMENT_STATUS_REQUIRES_AUTHENTICATION', { challenge: { attemptId: 'att_1', hint: 'Test mode: enter 123456 to pass the check, anything else to fail it.', testCode: '123456' } }));
    await flush();
    expect(el('challenge-hint').textContent).toBe('Testmodus: Geben Sie 123456 ein, um die Prüfung zu bestehen, oder etwas anderes, um sie scheitern zu lassen.');
  });

  it('follows a challenge by redirect (GET): the whole page goes to the issuer, no dialog opens', async () => {
    const { el, fillCard, submit, fetches, location } = runPage();
    fillCard();
    submit();
    fetches[0]!.respond(200, outcome('PAYMENT_STATUS_REQUIRES_AUTHENTICATION', { challenge: { attemptId: 'att_1', testCode: '123456', redirectUrl: 'https://pay.example/simulator/issuer/alpha_1?sig=x', redirectMethod: 'GET' } }));
    await flush();
    expect(location.assign).toHaveBeenCalledWith('https://pay.example/simulator/issuer/alpha_1?sig=x');
    expect(el('challenge').open).toBeFalsy();
  });

  it('follows a challenge by redirect (POST): a form of the redirect fields is submitted to the issuer', async () => {
    const { dom, fillCard, submit, fetches, location } = runPage();
    fillCard();
    submit();
    fetches[0]!.respond(200, outcome('PAYMENT_STATUS_REQUIRES_AUTHENTICATION', { challenge: { attemptId: 'att_1', redirectUrl: 'https://acs.example/challenge', redirectMethod: 'POST', redirectFields: { creq: 'abc', MD: '1' } } }));
    await flush();
    expect(location.assign).not.toHaveBeenCalled();
    expect(dom.appended).toHaveLength(1);
    expect(dom.appended[0]).toMatchObject({ tag: 'form', method: 'post', action: 'https://acs.example/challenge', submitted: 1 });
    expect(dom.appended[0]!.children.map((c) => [c.type, c.name, c.value])).toEqual([
      ['hidden', 'creq', 'abc'],
      ['hidden', 'MD', '1'],
    ]);
  });

  it('puts the core field errors on their fields', async () => {
    const { el, dom, fillCard, submit, fetches } = runPage();
    fillCard();
    submit();
    fetches[0]!.respond(400, { code: 'invalid_argument', message: 'bad', details: [{ type: 'checkout.v1.ErrorDetail', value: '', debug: { code: 'card_cvc_invalid' } }] });
    await flush();
    expect(el('cc-csc').getAttribute('aria-invalid')).toBe('true');
    expect(dom.activeElement?.id).toBe('cc-csc');
  });

  it('reloads when the order was paid or expired meanwhile', async () => {
    const { fillCard, submit, fetches, location } = runPage();
    fillCard();
    submit();
    fetches[0]!.respond(400, { code: 'failed_precondition', message: 'The order is already paid.' });
    await flush();
    expect(location.reload).toHaveBeenCalledOnce();
  });

  it('runs the 3-D Secure step: opens the issuer dialog, sends the code, handles the outcome', async () => {
    const { el, dom, fillCard, submit, fetches, location } = runPage();
    fillCard();
    submit();
    fetches[0]!.respond(200, outcome('PAYMENT_STATUS_REQUIRES_AUTHENTICATION', { challenge: { attemptId: 'att_1', hint: 'Test mode: enter 123456' } }));
    await flush();
    expect(el('challenge').open).toBe(true);
    expect(el('challenge-hint').textContent).toBe('Test mode: enter 123456');
    expect(dom.activeElement?.id).toBe('challenge-code');

    el('challenge-form').dispatch('submit');
    expect(fetches).toHaveLength(1);
    expect(el('challenge-code-error').textContent).toBe('Enter the verification code.');

    el('challenge-code').value = '000000';
    el('challenge-form').dispatch('submit');
    expect(fetches[1]!.url).toBe('/checkout.v1.CheckoutService/CompleteAuthentication');
    expect(fetches[1]!.body).toEqual({ checkoutId: 'Xy7kP2mQ9rT4vW8zA1bC3dE5', attemptId: 'att_1', code: '000000' });
    fetches[1]!.respond(200, outcome('PAYMENT_STATUS_REQUIRES_AUTHENTICATION', { challenge: { attemptId: 'att_1', hint: 'Test mode: enter 123456' } }));
    await flush();
    expect(el('challenge-status').textContent).toBe('That code is not correct. Try again.');

    el('challenge-code').value = '123456';
    el('challenge-form').dispatch('submit');
    fetches[2]!.respond(200, outcome('PAYMENT_STATUS_SUCCEEDED'));
    await flush();
    expect(location.reload).toHaveBeenCalledOnce();
  });

  it('after a failed check tells the shopper plainly to try again or use another card, with no counter unless few attempts are left', async () => {
    const cases = [
      ['en', 9, 'Authentication failed. Try again, or use another card.'],
      ['de', 9, 'Die Authentifizierung ist fehlgeschlagen. Versuchen Sie es erneut oder verwenden Sie eine andere Karte.'],
      ['en', 4, 'Authentication failed. Try again, or use another card.'],
      ['en', 3, 'Authentication failed. Try again, or use another card. 3 attempts remaining.'],
      ['en', 1, 'Authentication failed. Try again, or use another card. 1 attempt remaining.'],
      ['de', 2, 'Die Authentifizierung ist fehlgeschlagen. Versuchen Sie es erneut oder verwenden Sie eine andere Karte. Noch 2 Versuche.'],
    ] as const;
    for (const [language, left, shown] of cases) {
      const { el, fillCard, submit, fetches } = runPage({}, language);
      fillCard();
      submit();
      fetches[0]!.respond(200, outcome('PAYMENT_STATUS_REQUIRES_AUTHENTICATION', { challenge: { attemptId: 'att_1', testCode: '123456' } }));
      await flush();
      el('challenge-code').value = '000000';
      el('challenge-form').dispatch('submit');
      fetches[1]!.respond(200, outcome('PAYMENT_STATUS_FAILED', { declineCode: 'authentication_failed', message: 'The cardholder failed 3-D Secure authentication.', checkout: { attemptsRemaining: left } }));
      await flush();
      await flush();
      expect(el('challenge').open).toBe(false);
      expect(el('card-status').textContent, `${language}, ${left} left`).toBe(shown);
    }
  });

  it('abandons the challenge on Cancel and on Escape, then reports it on the form', async () => {
    for (const how of ['cancel-button', 'escape']) {
      const { el, dom, fillCard, submit, fetches } = runPage();
      fillCard();
      submit();
      fetches[0]!.respond(200, outcome('PAYMENT_STATUS_REQUIRES_AUTHENTICATION', { challenge: { attemptId: 'att_2' } }));
      await flush();
      if (how === 'escape') expect(el('challenge').dispatch('cancel').defaultPrevented).toBe(true);
      else el('challenge-cancel').dispatch('click');
      expect(fetches[1]!.body).toEqual({ checkoutId: 'Xy7kP2mQ9rT4vW8zA1bC3dE5', attemptId: 'att_2', abandon: true });
      fetches[1]!.respond(200, outcome('PAYMENT_STATUS_FAILED', { declineCode: 'authentication_failed', checkout: { attemptsRemaining: 4 } }));
      await flush();
      await flush();
      expect(el('challenge').open).toBe(false);
      expect(fetches).toHaveLength(2);
      expect(el('card-status').textContent).toBe('You cancelled the confirmation. You can try again.');
      expect(dom.activeElement?.id).toBe('cc-number');
    }
  });

  it('pays with the test wallet', async () => {
    const { el, fetches, location } = runPage();
    el('wallet-pay').dispatch('click');
    el('wallet-pay').dispatch('click');
    expect(fetches).toHaveLength(1);
    expect(fetches[0]!.url).toBe('/checkout.v1.CheckoutService/SubmitWalletPayment');
    expect(fetches[0]!.body).toEqual({ checkoutId: 'Xy7kP2mQ9rT4vW8zA1bC3dE5', submissionId: expect.any(String) });
    fetches[0]!.respond(200, outcome('PAYMENT_STATUS_SUCCEEDED'));
    await flush();
    expect(location.reload).toHaveBeenCalledOnce();
  });
});

describe('the payment link page script', () => {
  // A link's page: no order, so no checkout id or token, and no bank transfer instructions yet.
  const linkPage = { checkoutId: '', checkoutToken: '', bankTransfer: undefined, order: { id: '', checkoutUrl: '' } };
  const SUFFIX = 'Lk8sJ2nB5vC7xZ9qW1eR3tY6uI0oP4aS';
  const started = { checkoutId: 'Nw4rD6tF8hJ0kL2zX5cV7bN9', checkoutToken: 'ctok_started', checkoutUrl: 'https://pay.example/c/Nw4rD6tF8hJ0kL2zX5cV7bN9' };

  it('starts the order at the first Pay, then pays it with its token, and the page becomes the order\'s', async () => {
    const { el, fillCard, submit, fetches, location, history } = runPage(linkPage, 'en', SUFFIX);
    expect(el('card-submit').disabled).toBe(false);
    fillCard();
    submit();
    await flush();
    expect(fetches).toHaveLength(1);
    expect(fetches[0]!.url).toBe('/checkout.v1.PaymentLinkPageService/StartPayment');
    expect(fetches[0]!.body).toEqual({ suffix: SUFFIX, startId: expect.any(String) });
    expect(fetches[0]!.headers).not.toHaveProperty('checkout-token');
    fetches[0]!.respond(200, started);
    await flush();
    await flush();
    expect(history.replaceState).toHaveBeenCalledWith(null, '', '/c/Nw4rD6tF8hJ0kL2zX5cV7bN9');
    expect(fetches).toHaveLength(2);
    expect(fetches[1]!.url).toBe('/checkout.v1.CheckoutService/SubmitCardPayment');
    expect(fetches[1]!.headers['checkout-token']).toBe('ctok_started');
    expect(fetches[1]!.body).toMatchObject({ checkoutId: 'Nw4rD6tF8hJ0kL2zX5cV7bN9' });
    fetches[1]!.respond(200, outcome('PAYMENT_STATUS_FAILED', { declineCode: 'insufficient_funds', checkout: { attemptsRemaining: 9 } }));
    await flush();
    // The next try pays the same order: no second start.
    el('wallet-pay').dispatch('click');
    expect(fetches).toHaveLength(3);
    expect(fetches[2]!.url).toBe('/checkout.v1.CheckoutService/SubmitWalletPayment');
    expect(fetches[2]!.body).toMatchObject({ checkoutId: 'Nw4rD6tF8hJ0kL2zX5cV7bN9' });
    fetches[2]!.respond(200, outcome('PAYMENT_STATUS_SUCCEEDED'));
    await flush();
    expect(location.reload).toHaveBeenCalledOnce();
  });

  it('repeats the same start id after a network failure, and says so when the link is busy', async () => {
    const { el, fillCard, submit, fetches } = runPage(linkPage, 'en', SUFFIX);
    fillCard();
    submit();
    await flush();
    fetches[0]!.fail();
    await flush();
    await flush();
    expect(el('card-status').textContent).toBe('The payment service could not be reached. Try again: you will not be charged twice.');
    submit();
    await flush();
    expect(fetches[1]!.body).toEqual(fetches[0]!.body);
    fetches[1]!.respond(429, { code: 'resource_exhausted', message: 'busy', details: [{ debug: { type: 'rate_limit_error', code: 'payment_link_busy' } }] });
    await flush();
    await flush();
    expect(el('card-status').textContent).toBe('Many payments are being started here right now. Please wait a moment, then try again. You have not been charged.');
    expect(el('card-submit').disabled).toBe(false);
  });

  it('tells the customer a single-use link was just used, and takes no second try', async () => {
    const { el, fillCard, submit, fetches } = runPage(linkPage, 'en', SUFFIX);
    fillCard();
    submit();
    await flush();
    fetches[0]!.respond(400, { code: 'failed_precondition', message: 'used', details: [{ debug: { type: 'invalid_request_error', code: 'payment_link_used' } }] });
    await flush();
    await flush();
    expect(el('card-status').textContent).toBe('This payment link has just been used by someone else, and it accepts one payment only. You have not been charged.');
    expect(el('card-submit').disabled).toBe(true);
  });

  it('opens a new order\'s bank details from the bank transfer button', async () => {
    const { el, fetches, location, history } = runPage(linkPage, 'en', SUFFIX);
    expect(el('bank-start').disabled).toBe(false);
    el('bank-start').dispatch('click');
    await flush();
    expect(fetches[0]!.url).toBe('/checkout.v1.PaymentLinkPageService/StartPayment');
    fetches[0]!.respond(200, started);
    await flush();
    await flush();
    expect(history.replaceState).toHaveBeenCalledWith(null, '', '/c/Nw4rD6tF8hJ0kL2zX5cV7bN9');
    expect(location.reload).toHaveBeenCalledOnce();
  });
});

describe('the receipt page script', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  const paid: SampleOverrides = {
    order: { status: OrderStatus.PAID },
    receipt: create(ReceiptSchema, { method: 'card', cardBrand: 'visa', cardLast4: '4242', paidAt: timestampFromDate(SAMPLE_NOW) }),
  };

  it('returns to the merchant after the announced delay', () => {
    const { el, location } = runPage(paid);
    expect(el('redirect-status').textContent).toBe('You will be taken back to Bäckerei Müller in 10 seconds.');
    expect(el('stay').hidden).toBe(false);
    vi.advanceTimersByTime(9_999);
    expect(location.assign).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(location.assign).toHaveBeenCalledWith('https://shop.example/return?order_id=ord_Xy7kP2mQ9rT4vW8zA1bC3dE5&reference=R-1001');
  });

  it('stays when the customer asks to', () => {
    const { el, location } = runPage(paid);
    el('stay').dispatch('click');
    vi.advanceTimersByTime(60_000);
    expect(location.assign).not.toHaveBeenCalled();
    expect(el('stay').hidden).toBe(true);
  });
});
