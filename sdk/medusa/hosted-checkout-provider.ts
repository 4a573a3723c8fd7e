// The Medusa 2 payment provider: Medusa's payment module calls it for each payment session and payment, and it
// speaks to the service with the server SDK. One payment session is one order of ours, whose reference is the
// session's id; the customer pays it on the hosted page (checkout_url) or with the embedded fields or the mobile
// SDK (client_secret and the publishable key); our signed webhooks tell Medusa when it is paid.
import { AbstractPaymentProvider, MedusaError } from '@medusajs/framework/utils';
import type {
  AuthorizePaymentInput,
  AuthorizePaymentOutput,
  CancelPaymentInput,
  CancelPaymentOutput,
  CapturePaymentInput,
  CapturePaymentOutput,
  DeletePaymentInput,
  DeletePaymentOutput,
  GetPaymentStatusInput,
  GetPaymentStatusOutput,
  InitiatePaymentInput,
  InitiatePaymentOutput,
  ProviderWebhookPayload,
  RefundPaymentInput,
  RefundPaymentOutput,
  RetrievePaymentInput,
  RetrievePaymentOutput,
  UpdatePaymentInput,
  UpdatePaymentOutput,
  WebhookActionResult,
} from '@medusajs/framework/types';
import { Checkout, SIGNATURE_HEADER, verifyWebhook, type CreatedOrder, type Order, type OrderCreateParams } from '@hosted-checkout/node';
import { toMinorUnits } from './amounts.ts';
import { captureKey, createKey, refundKey, releaseKey, replaceKey } from './idempotency-keys.ts';
import { checkOptions, type HostedCheckoutOptions } from './options.ts';
import { isPayable, readSessionData, sessionData, sessionStatus, type CheckoutSessionData } from './session-data.ts';
import { webhookAction } from './webhook-action.ts';

/** The provider's identifier: with the id `hosted-checkout` in medusa-config, Medusa names it `pp_hosted-checkout_hosted-checkout`. */
export const PROVIDER_IDENTIFIER = 'hosted-checkout';

/** Our order statuses in which the money was taken. */
const CAPTURED: ReadonlySet<Order['status']> = new Set(['paid', 'partially_refunded', 'refunded']);

/** What the server SDK's errors carry that the provider reads (not instanceof: a second copy of the SDK would not match). */
interface SdkError {
  readonly status?: number;
  readonly type?: string;
  readonly code?: string;
  readonly requestId?: string;
  readonly message: string;
}

function sdkError(err: unknown): SdkError | undefined {
  return err instanceof Error && typeof (err as SdkError).type === 'string' ? (err as SdkError) : undefined;
}

/**
 * The hosted checkout as a Medusa payment provider. Registered through the package's default export
 * (`resolve: '@hosted-checkout/medusa'` in medusa-config); Medusa constructs it with its container and the options.
 */
export class HostedCheckoutProviderService extends AbstractPaymentProvider<HostedCheckoutOptions> {
  static override identifier = PROVIDER_IDENTIFIER;

  /**
   * Called by Medusa when it loads the provider.
   * @throws TypeError naming the option at fault
   */
  static override validateOptions(options: Record<string, unknown>): void {
    checkOptions(options);
  }

  readonly #options: HostedCheckoutOptions;
  readonly #checkout: Checkout;

  /** @throws TypeError when an option is missing or wrong (see {@link checkOptions}) */
  constructor(cradle: Record<string, unknown>, options: HostedCheckoutOptions) {
    super(cradle, options);
    this.#options = checkOptions(options);
    this.#checkout = new Checkout(options.secretKey, {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      timeout: options.timeoutMs ?? 15_000,
      maxRetries: options.maxRetries ?? 2,
    });
  }

  /**
   * A payment session was created: creates our order for its amount, with the session's id as reference
   * (Idempotency-Key `medusa:<session id>:create`), and answers its id, checkout_url and client_secret.
   * @throws MedusaError (invalid data) when the service refuses the order, e.g. an amount of 0 or an unknown currency
   */
  async initiatePayment(input: InitiatePaymentInput): Promise<InitiatePaymentOutput> {
    const sessionId = typeof input.data?.session_id === 'string' ? input.data.session_id : input.context?.idempotency_key;
    if (!sessionId) {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, 'initiatePayment needs the payment session\'s id (data.session_id), which Medusa\'s payment module passes: create a payment session rather than calling the provider.');
    }
    const currency = input.currency_code.toUpperCase();
    const order = await this.#createOrder(sessionId, toMinorUnits(input.amount, currency), currency, createKey(input.context?.idempotency_key ?? sessionId));
    return { id: order.id, data: sessionData(order, sessionId), status: 'pending' };
  }

  /**
   * The cart is being completed: reads our order. Paid → `captured`, authorized (manual capture) →
   * `authorized`; not paid yet → `requires_more` (the customer pays at checkout_url) or `pending` while a
   * payment is under way; expired or voided → `canceled`.
   * @throws MedusaError (not allowed) when the order is not this session's
   */
  async authorizePayment(input: AuthorizePaymentInput): Promise<AuthorizePaymentOutput> {
    const data = readSessionData(input.data);
    const order = await this.#retrieve(data.checkout_order_id);
    // Medusa passes the session's id as the idempotency key here: the order must be the one made for it.
    const sessionId = input.context?.idempotency_key ?? data.session_id;
    if (sessionId !== undefined && order.reference !== sessionId) {
      throw new MedusaError(MedusaError.Types.NOT_ALLOWED, `Order ${order.id} of the hosted checkout belongs to payment session ${order.reference}, not ${sessionId}.`);
    }
    return { status: sessionStatus(order), data: this.#data(order, data) };
  }

  /**
   * Captures an authorized order (capture method manual) in full: Medusa passes no amount to the provider.
   * An order already captured (paid automatically, or by an earlier capture) is answered as it is.
   * @throws MedusaError (not allowed) when the order was never authorized, or expired or was voided
   */
  async capturePayment(input: CapturePaymentInput): Promise<CapturePaymentOutput> {
    const data = readSessionData(input.data);
    let order = await this.#retrieve(data.checkout_order_id);
    if (order.status === 'authorized') {
      try {
        order = await this.#checkout.orders.capture(order.id, {}, { idempotencyKey: captureKey(order.id, input.context?.idempotency_key) });
      } catch (err) {
        // Captured meanwhile (by another capture of Medusa's, or from our dashboard)?
        if (sdkError(err)?.status !== 409) throw this.#translate('capture the order', err);
        order = await this.#retrieve(order.id);
      }
    }
    if (!CAPTURED.has(order.status)) {
      throw new MedusaError(MedusaError.Types.NOT_ALLOWED, `Order ${order.id} of the hosted checkout is ${order.status}: there is no authorized payment to capture.`);
    }
    return { data: this.#data(order, data) };
  }

  /**
   * Refunds part or all of a captured order (Idempotency-Key `medusa:<Medusa refund id>:refund`).
   * @throws MedusaError (not allowed) when the service refuses it (more than captured, a voided order) or the refund failed
   */
  async refundPayment(input: RefundPaymentInput): Promise<RefundPaymentOutput> {
    const data = readSessionData(input.data);
    const currency = data.currency ?? (await this.#retrieve(data.checkout_order_id)).currency;
    const amount = toMinorUnits(input.amount, currency);
    const refund = await this.#call('refund the order', () =>
      this.#checkout.refunds.create(data.checkout_order_id, { amount, reason: this.#options.refundReason ?? 'requested_by_customer' }, { idempotencyKey: refundKey(input.context?.idempotency_key) }),
    );
    if (refund.status === 'failed' || refund.status === 'canceled') {
      throw new MedusaError(MedusaError.Types.NOT_ALLOWED, `Refund ${refund.id} of order ${data.checkout_order_id} ${refund.status}${refund.failure_code ? ` (${refund.failure_code})` : ''}: no money was returned.`);
    }
    const order = await this.#retrieve(data.checkout_order_id);
    return { data: { ...this.#data(order, data), last_refund_id: refund.id, last_refund_status: refund.status } };
  }

  /**
   * Medusa cancels the payment: an order not paid yet is expired (its checkout takes no payment any more); one
   * paid or authorized is voided (the money is released before settlement); any other is left as it is.
   * @throws MedusaError when a card payment is in flight (retry), or the service refuses the void (refund instead)
   */
  async cancelPayment(input: CancelPaymentInput): Promise<CancelPaymentOutput> {
    return { data: await this.#release(input.data) };
  }

  /**
   * Medusa deletes the payment session (the cart changed, or another session replaced it): as cancelPayment, so
   * that the customer cannot pay a stale amount, and money taken for it goes back. A session whose order was
   * never created (its initiation failed) has nothing to delete.
   */
  async deletePayment(input: DeletePaymentInput): Promise<DeletePaymentOutput> {
    if (typeof input.data?.checkout_order_id !== 'string') return { data: input.data ?? {} };
    return { data: await this.#release(input.data) };
  }

  /** Our order's status, in Medusa's terms (see authorizePayment). */
  async getPaymentStatus(input: GetPaymentStatusInput): Promise<GetPaymentStatusOutput> {
    const data = readSessionData(input.data);
    const order = await this.#retrieve(data.checkout_order_id);
    return { status: sessionStatus(order), data: this.#data(order, data) };
  }

  /** Our order as it is now, in the session's data. */
  async retrievePayment(input: RetrievePaymentInput): Promise<RetrievePaymentOutput> {
    const data = readSessionData(input.data);
    return { data: this.#data(await this.#retrieve(data.checkout_order_id), data) };
  }

  /**
   * The session's amount or currency changed: our order's amount cannot, so an order not paid yet is expired and
   * replaced by a new one for the new amount (Idempotency-Key `medusa:<session>:replace:<old order>:<amount>`, so
   * that a retry with the old order's data answers the same replacement). The same amount answers the order as it is.
   * @throws MedusaError (not allowed) when the order is already paid or authorized: cancel it and start a new session
   */
  async updatePayment(input: UpdatePaymentInput): Promise<UpdatePaymentOutput> {
    const data = readSessionData(input.data);
    const currency = input.currency_code.toUpperCase();
    const amount = toMinorUnits(input.amount, currency);
    const order = await this.#retrieve(data.checkout_order_id);
    const sessionId = data.session_id ?? order.reference;
    if (order.amount === amount && order.currency === currency) return { status: sessionStatus(order), data: this.#data(order, data) };
    // Expired already is the retry of an update whose answer Medusa did not keep (or an order that ran out): replaced all the same.
    const current = isPayable(order.status) ? await this.#expire(order) : order;
    if (current.status !== 'expired') {
      throw new MedusaError(MedusaError.Types.NOT_ALLOWED, `Order ${order.id} of the hosted checkout is ${current.status}: its amount cannot change. Cancel the payment and create a new payment session.`);
    }
    const replaced = await this.#createOrder(sessionId, amount, currency, replaceKey(input.context?.idempotency_key ?? sessionId, order.id, amount, currency));
    return { status: 'pending', data: sessionData(replaced, sessionId) };
  }

  /**
   * A delivery at Medusa's `/hooks/payment/<provider>` route: verified with the endpoint's signing secret on the
   * raw body (Medusa keeps it for that route), then mapped to Medusa's action with the payment session and amount
   * (see {@link webhookAction}).
   * @throws WebhookVerificationError when the signature, its timestamp or the body does not verify: Medusa then
   *   records nothing
   */
  async getWebhookActionAndData(payload: ProviderWebhookPayload['payload']): Promise<WebhookActionResult> {
    const raw = payload.rawData;
    if (typeof raw !== 'string' && !(raw instanceof Uint8Array)) {
      throw new TypeError('The webhook payload has no raw body (rawData): the signature is over the exact bytes received. Medusa\'s /hooks/payment/<provider> route keeps them; a route of your own needs bodyParser { preserveRawBody: true }.');
    }
    const header = headerValue(payload.headers, SIGNATURE_HEADER);
    const secrets = typeof this.#options.webhookSecret === 'string' ? this.#options.webhookSecret : [...this.#options.webhookSecret];
    const event = verifyWebhook(raw, header, secrets, this.#options.webhookToleranceSeconds ? { toleranceSeconds: this.#options.webhookToleranceSeconds } : {});
    return webhookAction(event);
  }

  /** Creates our order of a session. */
  async #createOrder(sessionId: string, amount: number, currency: string, idempotencyKey: string): Promise<CreatedOrder> {
    const params: OrderCreateParams = {
      amount,
      currency,
      reference: sessionId,
      capture_method: this.#options.captureMethod ?? 'automatic',
      ...(this.#options.returnUrl ? { return_url: this.#options.returnUrl } : {}),
    };
    return this.#call('create the order', () => this.#checkout.orders.create(params, { idempotencyKey }));
  }

  /** Expires an unpaid order, voids a paid or authorized one; answers the new session data. */
  async #release(raw: Record<string, unknown> | undefined): Promise<CheckoutSessionData> {
    const data = readSessionData(raw);
    let order = await this.#retrieve(data.checkout_order_id);
    if (isPayable(order.status)) order = await this.#expire(order);
    if (order.status === 'paid' || order.status === 'authorized') {
      order = await this.#call('void the order', () => this.#checkout.orders.void(order.id, { idempotencyKey: releaseKey(order.id, 'void') }));
    }
    return this.#data(order, data);
  }

  /** Expires an unpaid order; answers it as it is afterwards (paid, if the customer paid just before). */
  async #expire(order: Order): Promise<Order> {
    try {
      return await this.#checkout.orders.expire(order.id, { idempotencyKey: releaseKey(order.id, 'expire') });
    } catch (err) {
      // Paid meanwhile: the caller decides (void it, or refuse to change its amount).
      if (sdkError(err)?.code === 'order_not_open') return this.#retrieve(order.id);
      throw this.#translate('expire the order', err);
    }
  }

  #retrieve(orderId: string): Promise<Order> {
    return this.#call('read the order', () => this.#checkout.orders.retrieve(orderId));
  }

  #data(order: Order | CreatedOrder, previous: Partial<CheckoutSessionData>): CheckoutSessionData {
    return sessionData(order, previous.session_id ?? order.reference, previous);
  }

  async #call<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw this.#translate(what, err);
    }
  }

  /** The service's refusals as Medusa's invalid-data errors (a 400 with the message in Medusa's API); the rest as they are. */
  #translate(what: string, err: unknown): unknown {
    const error = sdkError(err);
    if (error?.type !== 'invalid_request_error') return err;
    const translated = new MedusaError(MedusaError.Types.INVALID_DATA, `The hosted checkout refused to ${what}: ${error.message} (${error.code ?? 'no code'}; request ${error.requestId ?? 'unknown'})`, error.code);
    (translated as { cause?: unknown }).cause = err;
    return translated;
  }
}

/** A header's value from Medusa's (Express's, lowercased) request headers. */
function headerValue(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() !== wanted) continue;
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  }
  return undefined;
}
