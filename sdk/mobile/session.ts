// The mobile SDK: a headless payment flow an app (React Native, or any fetch environment) wraps in its own UI.
// It speaks CheckoutService over Connect or gRPC-Web with the publishable key and the order's client secret.
// No DOM, no Node built-ins: only fetch (and crypto.getRandomValues when present). It never logs anything.
import { Code, ConnectError, createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-web';
import { CheckoutService, PaymentMethod, PaymentStatus, type Checkout, type PaymentOutcome } from '../gen/checkout/v1/checkout_pb.ts';
import { OrderStatus } from '../gen/checkout/v1/order_pb.ts';

export interface CheckoutSessionOptions {
  /** Where the service answers, e.g. https://checkout.example.com (no trailing path). */
  readonly baseUrl: string;
  /** The merchant's publishable key (pk_test_… or pk_live_…). */
  readonly publishableKey: string;
  /** The order's client secret, handed to the app by the merchant's server: `ord_…_secret_…`. */
  readonly clientSecret: string;
  /** Wire protocol: Connect (default) or gRPC-Web. */
  readonly protocol?: 'connect' | 'grpc-web';
  /** The fetch to use (defaults to globalThis.fetch). */
  readonly fetch?: typeof globalThis.fetch;
  /** How many times a call that failed on the network is retried (with the same submission id). Default 3. */
  readonly maxRetries?: number;
  /** First backoff between retries in ms (doubled each time, with jitter). Default 200. */
  readonly retryDelayMs?: number;
  /** Per-call timeout in ms. Default 15 000. */
  readonly timeoutMs?: number;
}

export type MethodName = 'card' | 'wallet' | 'bank_transfer';
export type OrderStatusName = 'pending' | 'paid' | 'expired' | 'failed' | 'partially_refunded' | 'refunded' | 'voided' | 'authorized' | 'unknown';

/** The order as the app shows it. Amounts are in minor units of the currency. */
export interface CheckoutOrder {
  readonly id: string;
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly status: OrderStatusName;
}

export interface SavedCardSummary {
  readonly id: string;
  readonly brand: string;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
}

/** What load() answers: the order, the methods the customer may use, and the state of the checkout. */
export interface CheckoutState {
  readonly order: CheckoutOrder;
  readonly merchantName: string;
  readonly methods: readonly MethodName[];
  readonly savedCards: readonly SavedCardSummary[];
  readonly bankTransfer?: { readonly iban: string; readonly bic: string; readonly accountHolder: string; readonly reference: string; readonly amount: number; readonly currency: string };
  readonly attemptsRemaining: number;
  readonly testMode: boolean;
  /** The last failed attempt, if the last attempt failed. */
  readonly lastFailure?: { readonly code: string; readonly message: string };
}

export interface CardInput {
  readonly number: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvc: string;
  readonly name: string;
}

/** Where a 3-D Secure challenge sends the customer: the issuer's page. */
export interface ChallengeRedirect {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly fields: Readonly<Record<string, string>>;
}

/** The outcome of a step of the flow. */
export type PaymentResult =
  | { readonly kind: 'paid'; readonly order: CheckoutOrder }
  /**
   * The issuer asks for 3-D Secure. With `redirect`, open it in a browser (a GET to `url`, or a form
   * POST of `fields`): the issuer sends the customer back to the checkout's return leg, which
   * completes the payment; then waitForResult(), or completeRedirect() with the return leg's
   * parameters if the app intercepts it. Without (older servers), present the in-app challenge, then
   * answerChallenge() or abandonChallenge(). `testCode` is set in test mode only.
   */
  | { readonly kind: 'challenge'; readonly attemptId: string; readonly hint: string; readonly testCode?: string; readonly redirect?: ChallengeRedirect }
  /** A decline the customer can act on (another card, another method), while attempts remain. */
  | { readonly kind: 'declined'; readonly code: string; readonly message: string; readonly attemptsRemaining?: number }
  /** The flow cannot go on: refused by the service, the network, the order expired or was closed, or waitForResult timed out. */
  | { readonly kind: 'failed'; readonly reason: 'refused' | 'network' | 'closed' | 'timeout'; readonly code: string; readonly message: string };

export interface CheckoutSession {
  /** Loads the order and the methods available. Throws a CheckoutSessionError when the service refuses. */
  load(): Promise<CheckoutState>;
  /** Pays by card; one submission id per call, reused on every retry of that call. */
  payWithCard(card: CardInput): Promise<PaymentResult>;
  /** Pays with one of the order's customer's saved cards (CheckoutState.savedCards). */
  payWithSavedCard(cardId: string): Promise<PaymentResult>;
  /** Answers the 3-D Secure challenge with the code the customer typed. */
  answerChallenge(attemptId: string, code: string): Promise<PaymentResult>;
  /** The customer gave up the challenge. */
  abandonChallenge(attemptId: string): Promise<PaymentResult>;
  /** Completes a redirected challenge with the parameters of the return leg the app intercepted (its query or form fields). */
  completeRedirect(attemptId: string, returnParams: Readonly<Record<string, string>>): Promise<PaymentResult>;
  /** Polls GetCheckout until the order is paid, declined or closed (e.g. a bank transfer arriving), or timeoutMs elapses. */
  waitForResult(options?: { readonly timeoutMs?: number; readonly pollMs?: number; readonly signal?: AbortSignal }): Promise<PaymentResult>;
}

/** A refusal of load(): carries the Connect code name (e.g. "unauthenticated"). */
export class CheckoutSessionError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'CheckoutSessionError';
    this.code = code;
  }
}

/** A network failure of fetch (no answer read): the only failure retried besides `unavailable`. */
class NetworkFailure extends Error {}

const STATUS_NAMES: Record<number, OrderStatusName> = {
  [OrderStatus.PENDING]: 'pending',
  [OrderStatus.PAID]: 'paid',
  [OrderStatus.EXPIRED]: 'expired',
  [OrderStatus.FAILED]: 'failed',
  [OrderStatus.PARTIALLY_REFUNDED]: 'partially_refunded',
  [OrderStatus.REFUNDED]: 'refunded',
  [OrderStatus.VOIDED]: 'voided',
  [OrderStatus.AUTHORIZED]: 'authorized',
};
const METHOD_NAMES: Record<number, MethodName> = {
  [PaymentMethod.CARD]: 'card',
  [PaymentMethod.WALLET]: 'wallet',
  [PaymentMethod.BANK_TRANSFER]: 'bank_transfer',
};
const PAID: ReadonlySet<OrderStatusName> = new Set(['paid', 'authorized', 'partially_refunded', 'refunded']);
const CLOSED: ReadonlySet<OrderStatusName> = new Set(['expired', 'voided']);

/** The code name of a Connect code, as on the wire: "unauthenticated", "failed_precondition". */
function codeName(code: Code): string {
  return (Code[code] ?? 'unknown').replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}

/** A random submission id: crypto.randomUUID or getRandomValues where present (React Native has them with a polyfill), else Math.random. */
export function newSubmissionId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string; getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
  if (c?.randomUUID) return `sub_${c.randomUUID()}`;
  const bytes = new Uint8Array(16);
  if (c?.getRandomValues) c.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return `sub_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function isRetryable(err: unknown): boolean {
  const e = ConnectError.from(err);
  if (e.code === Code.Unavailable) return true;
  for (let cause: unknown = e.cause ?? err; cause; cause = (cause as { cause?: unknown }).cause) {
    if (cause instanceof NetworkFailure) return true;
    if (!(cause instanceof Error)) break;
  }
  return false;
}

function toOrder(checkout: Checkout | undefined): CheckoutOrder {
  const o = checkout?.order;
  return { id: o?.id ?? '', reference: o?.reference ?? '', amount: Number(o?.amount ?? 0n), currency: o?.currency ?? '', status: STATUS_NAMES[o?.status ?? 0] ?? 'unknown' };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

/** Creates a headless checkout flow for one order. */
export function createCheckoutSession(options: CheckoutSessionOptions): CheckoutSession {
  const { baseUrl, publishableKey, clientSecret } = options;
  const marker = clientSecret.indexOf('_secret_');
  if (!clientSecret.startsWith('ord_') || marker < 0) throw new CheckoutSessionError('invalid_argument', 'clientSecret is not an order client secret (ord_…_secret_…)');
  const checkoutId = clientSecret.slice('ord_'.length, marker);
  const maxRetries = options.maxRetries ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 200;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const baseFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  // Tags a fetch that threw (connection refused, reset, dropped) so that only those, not answers, are retried.
  const taggedFetch: typeof globalThis.fetch = async (input, init) => {
    try {
      return await baseFetch(input, init);
    } catch (err) {
      if (init?.signal?.aborted) throw err;
      throw new NetworkFailure('network error', { cause: err });
    }
  };
  const credentials: Interceptor = (next) => (req) => {
    req.header.set('authorization', `Bearer ${publishableKey}`);
    req.header.set('checkout-client-secret', clientSecret);
    return next(req);
  };
  const transportOptions = { baseUrl, fetch: taggedFetch, interceptors: [credentials], defaultTimeoutMs: timeoutMs };
  const transport = options.protocol === 'grpc-web' ? createGrpcWebTransport(transportOptions) : createConnectTransport(transportOptions);
  const client: Client<typeof CheckoutService> = createClient(CheckoutService, transport);

  /** Runs call, retrying network failures with backoff; call must be safe to repeat (same submission id). */
  async function withRetries<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (attempt >= maxRetries || !isRetryable(err)) throw err;
        const base = retryDelayMs * 2 ** attempt;
        await sleep(base / 2 + Math.random() * base / 2);
      }
    }
  }

  function failure(err: unknown): PaymentResult {
    const e = ConnectError.from(err);
    if (isRetryable(err)) return { kind: 'failed', reason: 'network', code: 'unavailable', message: 'The service could not be reached.' };
    return { kind: 'failed', reason: 'refused', code: codeName(e.code), message: e.rawMessage };
  }

  function fromOutcome(outcome: PaymentOutcome | undefined): PaymentResult {
    switch (outcome?.status) {
      case PaymentStatus.SUCCEEDED:
        return { kind: 'paid', order: toOrder(outcome.checkout) };
      case PaymentStatus.REQUIRES_AUTHENTICATION:
        return {
          kind: 'challenge',
          attemptId: outcome.challenge?.attemptId ?? '',
          hint: outcome.challenge?.hint ?? '',
          ...(outcome.challenge?.testCode ? { testCode: outcome.challenge.testCode } : {}),
          ...(outcome.challenge?.redirectUrl
            ? { redirect: { url: outcome.challenge.redirectUrl, method: outcome.challenge.redirectMethod === 'POST' ? ('POST' as const) : ('GET' as const), fields: { ...outcome.challenge.redirectFields } } }
            : {}),
        };
      case PaymentStatus.FAILED:
        return { kind: 'declined', code: outcome.declineCode, message: outcome.message, ...(outcome.checkout ? { attemptsRemaining: outcome.checkout.attemptsRemaining } : {}) };
      default:
        return { kind: 'failed', reason: 'refused', code: 'unknown', message: 'The service answered no outcome.' };
    }
  }

  async function submit(call: () => Promise<{ outcome?: PaymentOutcome }>): Promise<PaymentResult> {
    try {
      return fromOutcome((await withRetries(call)).outcome);
    } catch (err) {
      return failure(err);
    }
  }

  async function getCheckout(): Promise<Checkout> {
    const res = await withRetries(() => client.getCheckout({ checkoutId }));
    if (!res.checkout) throw new CheckoutSessionError('internal', 'The service answered no checkout.');
    return res.checkout;
  }

  return {
    async load() {
      let c: Checkout;
      try {
        c = await getCheckout();
      } catch (err) {
        if (err instanceof CheckoutSessionError) throw err;
        const e = ConnectError.from(err);
        throw new CheckoutSessionError(isRetryable(err) ? 'unavailable' : codeName(e.code), e.rawMessage);
      }
      const bt = c.bankTransfer;
      return {
        order: toOrder(c),
        merchantName: c.merchantName,
        methods: c.methods.map((m) => METHOD_NAMES[m]).filter((m): m is MethodName => m !== undefined),
        savedCards: c.savedCards.map((s) => ({ id: s.id, brand: s.brand, last4: s.last4, expMonth: s.expMonth, expYear: s.expYear })),
        ...(bt ? { bankTransfer: { iban: bt.iban, bic: bt.bic, accountHolder: bt.accountHolder, reference: bt.reference, amount: Number(bt.amount), currency: bt.currency } } : {}),
        attemptsRemaining: c.attemptsRemaining,
        testMode: c.testMode,
        ...(c.lastFailureCode || c.lastFailureMessage ? { lastFailure: { code: c.lastFailureCode, message: c.lastFailureMessage } } : {}),
      };
    },

    payWithCard(card) {
      const submissionId = newSubmissionId();
      const request = { checkoutId, submissionId, card: { number: card.number.replace(/\s+/g, ''), expMonth: card.expMonth, expYear: card.expYear, cvc: card.cvc, name: card.name } };
      return submit(() => client.submitCardPayment(request));
    },

    payWithSavedCard(cardId) {
      const submissionId = newSubmissionId();
      return submit(() => client.submitSavedCardPayment({ checkoutId, submissionId, cardId }));
    },

    // Answering twice is harmless: the attempt is settled by the first answer, and the service says so.
    answerChallenge(attemptId, code) {
      return submit(() => client.completeAuthentication({ checkoutId, attemptId, code }));
    },

    abandonChallenge(attemptId) {
      return submit(() => client.completeAuthentication({ checkoutId, attemptId, abandon: true }));
    },

    completeRedirect(attemptId, returnParams) {
      return submit(() => client.completeRedirect({ checkoutId, attemptId, params: { ...returnParams } }));
    },

    async waitForResult({ timeoutMs: limit = 120_000, pollMs = 1000, signal } = {}) {
      const deadline = Date.now() + limit;
      for (;;) {
        let c: Checkout;
        try {
          c = await getCheckout();
        } catch (err) {
          return failure(err);
        }
        const order = toOrder(c);
        if (PAID.has(order.status)) return { kind: 'paid', order };
        if (CLOSED.has(order.status)) return { kind: 'failed', reason: 'closed', code: `order_${order.status}`, message: `The order is ${order.status}.` };
        if (order.status === 'failed') return { kind: 'declined', code: c.lastFailureCode, message: c.lastFailureMessage, attemptsRemaining: c.attemptsRemaining };
        if (Date.now() + pollMs > deadline || signal?.aborted) return { kind: 'failed', reason: 'timeout', code: 'timeout', message: 'No result before the time limit.' };
        await sleep(pollMs, signal);
      }
    },
  };
}
