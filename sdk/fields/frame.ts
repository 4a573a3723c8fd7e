// The script of the field frames, served from the checkout host: one input per frame (card number, expiry, CVC),
// and the page a 3-D Secure redirect returns to in the page's overlay (/fields/returned). Card data stays in these frames: the page gets only
// state (empty, complete, brand, error code) by postMessage, to the origin it announced, which the gateway also
// names in frame-ancestors. At confirm() the number frame asks its sibling frames for expiry and CVC over a
// BroadcastChannel of the checkout origin (never through the page), and pays with a Connect JSON call to its own
// origin, with the publishable key and the order's client secret.
import { cardDigits, cvcState, detectBrand, expiryState, groupDigits, numberState, parseExpiry, type Brand, type FieldErrorCode, type FieldState } from './card.ts';
import { checkEmbedderOrigin, checkRedirectUrl, parseChannelMessage, parseParentMessage, tagged, type ChannelMessage, type ConfirmResult, type FieldKind, type FrameMessage, type InitMessage } from './protocol.ts';
import { styleVariables } from './style.ts';

/** What the customer reads (announced by screen readers) when a field is wrong. */
const ERROR_TEXT: Record<FieldErrorCode, string> = {
  card_number_incomplete: 'The card number is incomplete.',
  card_number_invalid: 'The card number is invalid.',
  card_expiry_incomplete: 'The expiry date is incomplete.',
  card_expiry_invalid: 'The expiry date is invalid.',
  card_expiry_past: 'The card has expired.',
  card_cvc_incomplete: 'The security code is incomplete.',
  card_cvc_invalid: 'The security code is invalid.',
};

/** Proto3 JSON of a PaymentOutcome, as far as the frame reads it. */
interface Outcome {
  status?: string;
  declineCode?: string;
  message?: string;
  challenge?: { attemptId?: string; redirectUrl?: string; redirectMethod?: string; redirectFields?: Record<string, string> };
  checkout?: CheckoutJson;
}
/** Proto3 JSON of a Checkout, as far as the frame reads it. */
interface CheckoutJson {
  attemptsRemaining?: number;
  lastFailureCode?: string;
  lastFailureMessage?: string;
  order?: { id?: string; status?: string };
}
interface CallAnswer {
  outcome?: Outcome;
  checkout?: CheckoutJson;
  code?: string;
  reason?: string;
  message?: string;
}

const $ = (id: string) => document.getElementById(id);

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}

// The merchant page's origin, once checked against the browser's ancestorOrigins: the payment calls announce it, so
// that a redirect's return leg (and the simulated issuer's page) may be framed by that origin alone.
let embedder = '';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One Connect JSON unary call of CheckoutService on this origin. A request that got no answer (the network
 * failed) is sent again, identical, so that a payment is not made twice (the submission id is in the body).
 */
async function call(method: string, body: unknown, publishableKey: string, clientSecret: string): Promise<CallAnswer> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`/checkout.v1.CheckoutService/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', authorization: `Bearer ${publishableKey}`, 'checkout-client-secret': clientSecret, 'checkout-fields-origin': embedder },
        body: JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      if (attempt >= 2) return { code: 'unavailable', message: 'The payment service could not be reached.' };
      await sleep(300 * 2 ** attempt);
      continue;
    }
    const json = (await res.json().catch(() => null)) as (Record<string, unknown> & { details?: Array<{ debug?: { code?: unknown } }> }) | null;
    if (res.ok && json && typeof json.outcome === 'object') return { outcome: json.outcome as Outcome };
    if (res.ok && json && typeof json.checkout === 'object') return { checkout: json.checkout as CheckoutJson };
    const reason = Array.isArray(json?.details) ? json.details.map((d) => d.debug?.code).find((c) => typeof c === 'string') : undefined;
    return {
      code: typeof json?.code === 'string' ? json.code : res.status >= 500 ? 'unavailable' : 'unknown',
      ...(typeof reason === 'string' ? { reason } : {}),
      message: typeof json?.message === 'string' ? json.message.slice(0, 300) : 'The payment service refused the payment.',
    };
  }
}

/** Starts the frame: checks where it is embedded, then wires the input, or tells the page its redirect came back. */
function start(): void {
  const kind = document.body.dataset.field as FieldKind | 'returned' | undefined;
  const origin = checkEmbedderOrigin(new URLSearchParams(location.search).get('origin'));
  // The page must be the one that announced itself: the gateway put it in frame-ancestors, and the browser says who embeds us.
  const ancestors = location.ancestorOrigins;
  if (!kind || !origin || window.parent === window || (ancestors && ancestors[0] !== origin)) return;
  // The overlay's last page: it says only "back" (to that origin, never '*'); the number frame reads the result.
  if (kind === 'returned') return window.parent.postMessage(tagged({ type: 'returned' } satisfies FrameMessage), origin);
  const channelName = /^#([0-9a-f]{32})$/.exec(location.hash)?.[1];
  if (!channelName) return;
  embedder = origin;
  const channel = new BroadcastChannel(`checkout-fields:${channelName}`);
  const toPage = (message: FrameMessage) => window.parent.postMessage(tagged(message), origin);
  const toFrames = (message: ChannelMessage) => channel.postMessage(tagged(message));
  const listeners: Array<(m: ChannelMessage) => void> = [];
  channel.onmessage = (e) => {
    const m = parseChannelMessage(e.data);
    if (m) for (const l of listeners) l(m);
  };
  startField(kind, origin, toPage, toFrames, listeners);
}

function startField(kind: FieldKind, origin: string, toPage: (m: FrameMessage) => void, toFrames: (m: ChannelMessage) => void, listeners: Array<(m: ChannelMessage) => void>): void {
  const input = $('f') as HTMLInputElement;
  const label = $('l')!;
  const errorText = $('e')!;
  let init: InitMessage | null = null;
  let brand: Brand = 'unknown';
  let last = '';

  const state = (final: boolean): FieldState =>
    kind === 'cardNumber' ? numberState(input.value, final) : kind === 'cardExpiry' ? expiryState(input.value, new Date(), final) : cvcState(input.value, brand, final);

  const show = (error: FieldErrorCode | '') => {
    errorText.textContent = error ? ERROR_TEXT[error] : '';
    input.classList.toggle('invalid', Boolean(error));
    if (error) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  };

  const report = (final: boolean) => {
    const s = state(final);
    show(s.error);
    const message: FrameMessage = { type: 'change', empty: s.empty, complete: s.complete, brand, error: s.error };
    const key = JSON.stringify(message);
    if (key !== last) toPage(message);
    last = key;
  };

  input.addEventListener('input', () => {
    if (kind === 'cardNumber') {
      const next = detectBrand(cardDigits(input.value));
      if (next !== brand) toFrames({ type: 'brand', brand: next });
      brand = next;
    }
    report(false);
  });
  input.addEventListener('focus', () => toPage({ type: 'focus' }));
  input.addEventListener('blur', () => {
    if (kind === 'cardNumber' && numberState(input.value, true).complete) input.value = groupDigits(cardDigits(input.value));
    const exp = kind === 'cardExpiry' && parseExpiry(input.value);
    if (exp) input.value = `${String(exp.month).padStart(2, '0')} / ${String(exp.year % 100).padStart(2, '0')}`;
    if (input.value.trim()) report(true);
    toPage({ type: 'blur' });
  });

  listeners.push((m) => {
    if (m.type === 'brand' && kind === 'cardCvc') {
      brand = m.brand;
      input.maxLength = brand === 'amex' ? 4 : 3;
      if (input.value) report(false);
    }
    if (m.type === 'invalid' && m.field === kind) show(m.error);
    if (m.type === 'collect' && kind !== 'cardNumber') toFrames({ type: 'value', nonce: m.nonce, field: kind, value: input.value });
  });

  const payer = kind === 'cardNumber' ? createPayer(input, () => init, () => brand, show, toPage, toFrames, listeners) : null;

  window.addEventListener('message', (e) => {
    // Only the page that embeds us, from the origin it announced.
    if (e.source !== window.parent || e.origin !== origin) return;
    const m = parseParentMessage(e.data);
    if (!m) return;
    if (m.type === 'init') {
      if ((kind === 'cardNumber') !== Boolean(m.publishableKey)) return;
      // Once per frame: a later init (another script on the page) could otherwise send the card typed
      // here to another order, even another merchant's. The library sends one, when the frame loads.
      if (init) return;
      init = m;
      if (m.label) {
        label.textContent = m.label;
        document.title = m.label;
      }
      if (m.placeholder) input.placeholder = m.placeholder;
      for (const [name, value] of styleVariables(m.style)) document.documentElement.style.setProperty(name, value);
      toPage({ type: 'ready', height: Math.ceil(document.documentElement.getBoundingClientRect().height) });
    } else if (m.type === 'focus') {
      input.focus();
    } else if (m.type === 'clear') {
      input.value = '';
      if (kind === 'cardNumber' && brand !== 'unknown') toFrames({ type: 'brand', brand: (brand = 'unknown') });
      show('');
      report(false);
    } else if (m.type === 'confirm' && payer) {
      void payer.pay(m.id, m.name);
    } else if ((m.type === 'returned' || m.type === 'abandon') && payer) {
      payer.redirectEnded(m.type);
    }
  });
  toPage({ type: 'loaded' });
}

/** The number frame's payments: confirm() (gathers the card, pays, answers the page) and the end of a redirect. */
interface Payer {
  pay(id: number, name: string): Promise<void>;
  /** The page's overlay came back from the issuer (read the result), or the customer closed it (abandon the challenge). */
  redirectEnded(how: 'returned' | 'abandon'): void;
}

/** The number frame's confirm(): gathers the card, pays, sends the page to the issuer when asked, answers the page. */
function createPayer(
  input: HTMLInputElement,
  getInit: () => InitMessage | null,
  getBrand: () => Brand,
  show: (e: FieldErrorCode | '') => void,
  toPage: (m: FrameMessage) => void,
  toFrames: (m: ChannelMessage) => void,
  listeners: Array<(m: ChannelMessage) => void>,
): Payer {
  let busy = false;
  // The challenge the page's overlay is showing (the issuer's page), until its return leg or its abandon.
  let challenge: { attemptId: string; ending: boolean } | null = null;
  let finish: ((result: ConfirmResult) => void) | null = null;
  let credentials = { publishableKey: '', clientSecret: '', checkoutId: '' };
  // A submission whose answer never came (the network failed): confirming the same card again repeats its id,
  // so that the service answers the first outcome instead of charging twice. Kept in this frame's memory only.
  let unanswered: { card: string; submissionId: string } | null = null;

  /** Turns an answer of the service into the next step: done (a result), or a challenge to show. */
  const settle = (answer: CallAnswer) => {
    const o = answer.outcome;
    if (!o) {
      const fieldOf: Record<string, FieldKind> = { card_number_invalid: 'cardNumber', card_expiry_invalid: 'cardExpiry', card_cvc_invalid: 'cardCvc' };
      const field = answer.reason ? fieldOf[answer.reason] : undefined;
      if (field === 'cardNumber') show('card_number_invalid');
      else if (field) toFrames({ type: 'invalid', field, error: answer.reason as FieldErrorCode });
      return finish?.({ status: 'failed', code: answer.reason ?? answer.code ?? 'unknown', message: answer.message ?? '' });
    }
    if (o.status === 'PAYMENT_STATUS_REQUIRES_AUTHENTICATION' && o.challenge?.attemptId) {
      // 3-D Secure is a redirect, as in the hosted page: the page opens the issuer's page in its overlay.
      const url = checkRedirectUrl(new URL(o.challenge.redirectUrl ?? '', location.href).toString());
      if (!o.challenge.redirectUrl || !url) return finish?.({ status: 'failed', code: 'authentication_unavailable', message: 'The issuer\'s check could not be shown.' });
      challenge = { attemptId: o.challenge.attemptId, ending: false };
      toPage({ type: 'redirect', redirect: { url, method: o.challenge.redirectMethod?.toUpperCase() === 'POST' ? 'POST' : 'GET', fields: { ...o.challenge.redirectFields } } });
      return;
    }
    if (o.status === 'PAYMENT_STATUS_SUCCEEDED') return finish?.({ status: 'paid', orderId: o.checkout?.order?.id ?? '' });
    if (o.status === 'PAYMENT_STATUS_FAILED') {
      // Proto3 JSON leaves zero out: no attemptsRemaining means none left.
      return finish?.({ status: 'declined', code: o.declineCode || 'declined', message: o.message || 'The card was declined.', attemptsRemaining: o.checkout?.attemptsRemaining ?? 0 });
    }
    return finish?.({ status: 'failed', code: 'unknown', message: 'The payment service answered no outcome.' });
  };

  /**
   * The payment's result once its return leg completed it: read back with the client secret (the return page
   * says only "back", whoever framed it). The order may still be settling for a moment: read again, briefly.
   */
  const readResult = async (): Promise<ConfirmResult> => {
    for (let attempt = 0; attempt < 8; attempt++) {
      const answer = await call('GetCheckout', { checkoutId: credentials.checkoutId }, credentials.publishableKey, credentials.clientSecret);
      const c = answer.checkout;
      if (!c) return { status: 'failed', code: answer.reason ?? answer.code ?? 'unknown', message: answer.message ?? '' };
      const status = c.order?.status;
      if (status === 'ORDER_STATUS_PAID' || status === 'ORDER_STATUS_AUTHORIZED') return { status: 'paid', orderId: c.order?.id ?? '' };
      // Proto3 JSON leaves zero out: no attemptsRemaining means none left.
      if (status === 'ORDER_STATUS_FAILED') return { status: 'declined', code: c.lastFailureCode || 'declined', message: c.lastFailureMessage || 'The card was declined.', attemptsRemaining: c.attemptsRemaining ?? 0 };
      if (status === 'ORDER_STATUS_EXPIRED') return { status: 'failed', code: 'checkout_expired', message: 'This checkout has expired.' };
      await sleep(250 * (attempt + 1));
    }
    return { status: 'failed', code: 'payment_pending', message: 'The payment is still being processed.' };
  };

  const redirectEnded = (how: 'returned' | 'abandon') => {
    if (!challenge || challenge.ending) return;
    challenge.ending = true;
    if (how === 'returned') void readResult().then((r) => finish?.(r));
    else void call('CompleteAuthentication', { checkoutId: credentials.checkoutId, attemptId: challenge.attemptId, abandon: true }, credentials.publishableKey, credentials.clientSecret).then(settle);
  };

  /** Asks the sibling frames for their values; answers what came within 3 s. */
  const collect = () =>
    new Promise<{ cardExpiry?: string; cardCvc?: string }>((resolve) => {
      const nonce = randomHex(16);
      const values: { cardExpiry?: string; cardCvc?: string } = {};
      const listener = (m: ChannelMessage) => {
        if (m.type !== 'value' || m.nonce !== nonce) return;
        values[m.field] = m.value;
        if (values.cardExpiry !== undefined && values.cardCvc !== undefined) done();
      };
      const timer = setTimeout(() => done(), 3000);
      const done = () => {
        clearTimeout(timer);
        listeners.splice(listeners.indexOf(listener), 1);
        resolve(values);
      };
      listeners.push(listener);
      toFrames({ type: 'collect', nonce });
    });

  const pay = async (id: number, name: string) => {
    const answer = (result: ConfirmResult) => toPage({ type: 'result', id, result });
    const init = getInit();
    if (busy) return answer({ status: 'failed', code: 'confirm_in_progress', message: 'A payment is already being confirmed.' });
    if (!init?.publishableKey || !init.clientSecret) return answer({ status: 'failed', code: 'fields_not_ready', message: 'The card fields are not ready yet.' });
    busy = true;
    const secret = init.clientSecret;
    credentials = { publishableKey: init.publishableKey, clientSecret: secret, checkoutId: secret.slice(4, secret.indexOf('_secret_')) };
    const values = await collect();
    const number = numberState(input.value, true);
    const expiry = expiryState(values.cardExpiry ?? '', new Date(), true);
    const cvc = cvcState(values.cardCvc ?? '', getBrand(), true);
    if (values.cardExpiry === undefined || values.cardCvc === undefined) {
      busy = false;
      return answer({ status: 'failed', code: 'fields_not_mounted', message: 'Mount the card number, expiry and CVC fields before confirming.' });
    }
    const wrong: Array<[FieldKind, FieldState, FieldErrorCode]> = [
      ['cardNumber', number, 'card_number_incomplete'],
      ['cardExpiry', expiry, 'card_expiry_incomplete'],
      ['cardCvc', cvc, 'card_cvc_incomplete'],
    ];
    const invalid = wrong.filter(([, s]) => !s.complete).map(([field, s, fallback]) => [field, s.error || fallback] as const);
    if (invalid.length) {
      for (const [field, error] of invalid) {
        if (field === 'cardNumber') show(error);
        else toFrames({ type: 'invalid', field, error });
      }
      busy = false;
      return answer({ status: 'failed', code: invalid[0]![1], message: ERROR_TEXT[invalid[0]![1]] });
    }
    const exp = parseExpiry(values.cardExpiry)!;
    const result = await new Promise<ConfirmResult>((resolve) => {
      finish = resolve;
      const card = { number: cardDigits(input.value), expMonth: exp.month, expYear: exp.year, cvc: values.cardCvc!.trim(), name: name.trim() };
      const key = JSON.stringify([credentials.checkoutId, card]);
      const submissionId = unanswered?.card === key ? unanswered.submissionId : `sub_${randomHex(16)}`;
      unanswered = { card: key, submissionId };
      void call('SubmitCardPayment', { checkoutId: credentials.checkoutId, submissionId, card }, credentials.publishableKey, secret).then((answer) => {
        if (answer.outcome || answer.code !== 'unavailable') unanswered = null;
        settle(answer);
      });
    });
    finish = null;
    challenge = null;
    busy = false;
    answer(result);
  };
  return { pay, redirectEnded };
}

start();
