import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { TEST_CHALLENGE_CODE } from '../../domain/test-card.ts';
import type {
  AuthorizationOutcome,
  AuthorizationRequest,
  OperationOutcome,
  PaymentProcessor,
  ProcessorCapabilities,
} from '../../ports/payment-processor.port.ts';
import type { NotifiedOutcome, ProcessorNotifications, RawNotification } from '../../ports/processor-notifications.port.ts';
import type { TestCardDirectory } from '../../ports/test-card-directory.port.ts';
import { challengePassed, issuerAnswer } from './simulated-issuer.ts';
import { readCode, type Dialect } from './transformers.ts';

/** The path of the simulated issuer's page on our host; the processor reference follows it. */
export const SIMULATED_ISSUER_PATH = '/simulator/issuer/';

/** The header a simulated notification's signature travels in: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`. */
export const SIMULATOR_SIGNATURE_HEADER = 'x-simulator-signature';

/** How old a simulated notification's signature may be. */
export const SIMULATOR_NOTIFICATION_TOLERANCE_S = 300;

/**
 * The simulator's signing key. It is public on purpose: the simulator runs in test mode only, where
 * anyone may pass a challenge by typing the published test code; the signatures exist so that the
 * return leg and the notifications follow exactly the code path a real processor's will.
 */
export const SIMULATOR_SECRET = 'simulated-processor-test-mode-key';

/** How one simulated route is set up: its name, its dialect and how its issuer treats the soft-decline card. */
export interface SimulatedProcessorOptions<C extends string> {
  readonly route: string;
  readonly dialect: Dialect<C>;
  /** The alternative route approves what the primary soft-declines. */
  readonly approvesSoftDecline: boolean;
  readonly cards: TestCardDirectory;
  readonly secret?: string;
  /** Unix seconds, for notification timestamps (tests move it). */
  readonly nowSeconds?: () => number;
}

/** What the simulated issuer's page shows, and where its answer goes. */
export interface IssuerPageView {
  readonly processorRef: string;
  /** The return leg the customer is sent to once they answer. */
  readonly returnUrl: string;
  readonly testCode: string;
}

/** Operations the simulator answered, by our reference: a repeat gets the first answer. */
const JOURNAL_LIMIT = 10_000;

/**
 * A simulated processor speaking the PaymentProcessor contract, parameterised by its dialect: the
 * two test routes are two instances (alpha, the primary, in ISO 8583 codes; beta, the alternative,
 * in status words, approving the soft-decline card). Its 3-D Secure is a redirect to the simulated
 * issuer's page on our host, which sends the customer back to the return leg with signed
 * parameters; completeAuthorization verifies them. Captures, refunds, voids and reversals succeed
 * at once; sync answers from a journal of this process's answers (pending for a reference it never
 * gave, as a processor that has not decided). Its notifications are signed JSON.
 */
export class SimulatedProcessor<C extends string = string> implements PaymentProcessor {
  readonly route: string;
  readonly capabilities: ProcessorCapabilities = {
    methods: ['card', 'wallet'],
    currencies: 'any',
    manualCapture: true,
    partialCapture: true,
    partialRefund: true,
  };
  readonly notifications: ProcessorNotifications;
  readonly #options: SimulatedProcessorOptions<C>;
  readonly #secret: string;
  readonly #journal = new Map<string, AuthorizationOutcome | OperationOutcome>();

  constructor(options: SimulatedProcessorOptions<C>) {
    this.route = options.route;
    this.#options = options;
    this.#secret = options.secret ?? SIMULATOR_SECRET;
    this.notifications = { route: this.route, parse: (n) => this.#parseNotification(n) };
  }

  /** Whether a processor reference is one of this instance's. */
  owns(processorRef: string): boolean {
    return processorRef.startsWith(`${this.#options.dialect.prefix}_`);
  }

  async authorize(request: AuthorizationRequest): Promise<AuthorizationOutcome> {
    const { dialect, cards, approvesSoftDecline } = this.#options;
    const code = dialect.answers[await issuerAnswer(cards, request.merchantId, request.card, approvesSoftDecline)];
    const processorRef = `${dialect.prefix}_${randomUUID()}`;
    return this.#remember(processorRef, this.#read(code, processorRef, request.returnUrl));
  }

  async completeAuthorization(processorRef: string, returnParams: Readonly<Record<string, string>>): Promise<AuthorizationOutcome> {
    const { dialect } = this.#options;
    let passed: boolean;
    if (returnParams.sig === undefined && returnParams.code !== undefined) {
      // The in-app challenge (CompleteAuthentication): the customer's code itself.
      passed = challengePassed(returnParams.code);
    } else {
      const result = returnParams.result ?? '';
      passed = returnParams.ref === processorRef && this.#verify(`return|${processorRef}|${result}`, returnParams.sig ?? '') && result === 'passed';
    }
    const code = passed ? dialect.answers.approve : dialect.answers.authentication_failed;
    return this.#remember(processorRef, this.#read(code, processorRef, undefined));
  }

  async capture(processorRef: string, _amount: bigint, reference: string): Promise<OperationOutcome> {
    return this.#operation(`capture|${reference}`, { kind: 'succeeded', processorRef });
  }

  async refund(_captureRef: string, _amount: bigint, reference: string): Promise<OperationOutcome> {
    return this.#operation(`refund|${reference}`, { kind: 'succeeded', processorRef: `${this.#options.dialect.prefix}_refund_${reference}` });
  }

  async void(processorRef: string, reference: string): Promise<OperationOutcome> {
    return this.#operation(`void|${reference}`, { kind: 'succeeded', processorRef });
  }

  async reverse(processorRef: string, _amount: bigint, reference: string): Promise<OperationOutcome> {
    return this.#operation(`reverse|${reference}`, { kind: 'succeeded', processorRef });
  }

  async sync(processorRef: string): Promise<AuthorizationOutcome> {
    // Authorizations are journaled under their reference, operations under "<flow>|<our reference>".
    return (this.#journal.get(processorRef) as AuthorizationOutcome | undefined) ?? { kind: 'pending', processorRef };
  }

  async syncRefund(refundRef: string): Promise<OperationOutcome> {
    // The simulator settles a refund when asked: a reference it handed out is a refund that succeeded.
    return refundRef.startsWith(`${this.#options.dialect.prefix}_refund_`) ? { kind: 'succeeded', processorRef: refundRef } : { kind: 'pending', processorRef: refundRef };
  }

  /**
   * The issuer page of a challenge, when its link is this simulator's own (signed): what it shows,
   * and the return leg its answer goes to. Undefined for a forged or altered link.
   */
  issuerPage(processorRef: string, query: Readonly<Record<string, string | undefined>>): IssuerPageView | undefined {
    const returnUrl = query.return_url ?? '';
    if (!this.owns(processorRef) || !returnUrl || !this.#verify(`issuer|${processorRef}|${returnUrl}`, query.sig ?? '')) return undefined;
    return { processorRef, returnUrl, testCode: TEST_CHALLENGE_CODE };
  }

  /**
   * The issuer's answer to the code the customer typed on its page: the URL of the return leg with
   * the signed result (`ref`, `result` passed|failed, `sig`), where the page sends the customer.
   */
  answerChallenge(page: IssuerPageView, code: string): string {
    const result = challengePassed(code) ? 'passed' : 'failed';
    const target = new URL(page.returnUrl);
    target.searchParams.set('ref', page.processorRef);
    target.searchParams.set('result', result);
    target.searchParams.set('sig', this.#sign(`return|${page.processorRef}|${result}`));
    return target.toString();
  }

  /** Signs a notification body as the simulator sends it: the value of SIMULATOR_SIGNATURE_HEADER. */
  signNotification(rawBody: string, timestamp: number = this.#nowSeconds()): string {
    return `t=${timestamp},v1=${this.#sign(`${timestamp}.${rawBody}`)}`;
  }

  #nowSeconds(): number {
    return this.#options.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
  }

  #read(code: C, processorRef: string, returnUrl: string | undefined): AuthorizationOutcome {
    return readCode(this.#options.dialect.codes, code, processorRef, (ref) => ({ kind: 'action', processorRef: ref, redirect: this.#issuerRedirect(ref, returnUrl), testCode: TEST_CHALLENGE_CODE }));
  }

  /** The link to the issuer's page: on our host (the return leg's origin), signed so that it cannot send a customer elsewhere. */
  #issuerRedirect(processorRef: string, returnUrl: string | undefined) {
    const back = returnUrl ?? '';
    const fields = { return_url: back, sig: this.#sign(`issuer|${processorRef}|${back}`) };
    const path = `${SIMULATED_ISSUER_PATH}${encodeURIComponent(processorRef)}`;
    const url = returnUrl ? new URL(path, returnUrl) : undefined;
    if (!url) return { url: `${path}?${new URLSearchParams(fields).toString()}`, method: 'GET' as const, fields: {} };
    for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, v);
    return { url: url.toString(), method: 'GET' as const, fields: {} };
  }

  #operation(key: string, outcome: OperationOutcome): OperationOutcome {
    const first = this.#journal.get(key) as OperationOutcome | undefined;
    return first ?? this.#remember(key, outcome);
  }

  #remember<T extends AuthorizationOutcome | OperationOutcome>(key: string, outcome: T): T {
    if (this.#journal.size >= JOURNAL_LIMIT) this.#journal.delete(this.#journal.keys().next().value!);
    this.#journal.set(key, outcome);
    return outcome;
  }

  #sign(data: string): string {
    return createHmac('sha256', this.#secret).update(data).digest('hex');
  }

  #verify(data: string, signature: string): boolean {
    const expected = Buffer.from(this.#sign(data), 'hex');
    const given = Buffer.from(/^[0-9a-f]{64}$/.test(signature) ? signature : '', 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #parseNotification(notification: RawNotification): ReturnType<ProcessorNotifications['parse']> {
    const header = notification.headers[SIMULATOR_SIGNATURE_HEADER] ?? '';
    const parts = Object.fromEntries(header.split(',').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
    const timestamp = Number(parts.t);
    const body = notification.rawBody.toString('utf8');
    if (!Number.isInteger(timestamp) || !this.#verify(`${timestamp}.${body}`, parts.v1 ?? '')) return { ok: false, refusal: 'bad_signature' };
    if (Math.abs(this.#nowSeconds() - timestamp) > SIMULATOR_NOTIFICATION_TOLERANCE_S) return { ok: false, refusal: 'stale' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { ok: false, refusal: 'malformed' };
    }
    const event = parsed as { id?: unknown; flow?: unknown; processor_ref?: unknown; reference?: unknown; code?: unknown };
    const flows = ['authorization', 'capture', 'refund', 'void', 'reversal'] as const;
    const flow = flows.find((f) => f === event.flow);
    if (typeof event.id !== 'string' || !flow || typeof event.processor_ref !== 'string' || typeof event.code !== 'string') return { ok: false, refusal: 'malformed' };
    const processorRef = event.processor_ref;
    const read = this.#read(event.code as C, processorRef, undefined);
    let outcome: NotifiedOutcome;
    if (flow === 'authorization') {
      outcome = { flow, processorRef, outcome: read };
    } else {
      const op: OperationOutcome =
        read.kind === 'approved' ? { kind: 'succeeded', processorRef } : read.kind === 'declined' ? { kind: 'failed', declineCode: read.declineCode, processorCode: read.processorCode } : { kind: 'pending', processorRef };
      outcome = { flow, processorRef, reference: typeof event.reference === 'string' ? event.reference : undefined, outcome: op };
    }
    return { ok: true, notification: { eventId: event.id, outcomes: [outcome], acknowledgement: '[accepted]' } };
  }
}
