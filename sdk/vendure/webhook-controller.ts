// The plugin's webhook route: verifies a delivery with the SDK's verifier on the raw body, then settles
// the Vendure payment of an order.paid (idempotently: a redelivery finds it settled already).
import type { ServerResponse } from 'node:http';
import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import { ConnectError } from '@connectrpc/connect';
import { Logger, Order, OrderService, Payment, RequestContextService, TransactionalConnection } from '@vendure/core';
import { verifyWebhook } from '../webhooks/verify.ts';
import { SIGNATURE_HEADER } from '../webhooks/signature.ts';
import { WebhookVerificationError } from '../webhooks/webhook-verification-error.ts';
import type { WebhookEvent } from '../webhooks/webhook-event.ts';
import { DEFAULT_WEBHOOK_PATH } from './options.ts';
import { pluginContext } from './plugin-context.ts';
import type { RequestWithRawBody } from './raw-body.ts';

const LOG_CONTEXT = 'CheckoutPaymentPlugin';
/** Vendure's default channel, which every order is in besides its own. */
const DEFAULT_CHANNEL_CODE = '__default_channel__';

/** What the route answers: a status and a small JSON body. */
interface Outcome {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** Receives the service's signed webhooks at POST /<webhookPath>. */
export class CheckoutWebhookController {
  readonly #connection: TransactionalConnection;
  readonly #orders: OrderService;
  readonly #contexts: RequestContextService;

  constructor(connection: TransactionalConnection, orders: OrderService, contexts: RequestContextService) {
    this.#connection = connection;
    this.#orders = orders;
    this.#contexts = contexts;
  }

  /** The route: 400 for a delivery that fails verification (nothing changes), 2xx once handled, 5xx to be retried. */
  async receive(req: RequestWithRawBody, res: ServerResponse): Promise<void> {
    let outcome: Outcome;
    try {
      outcome = await this.#handle(req);
    } catch (err) {
      Logger.error(`Webhook handling failed: ${err instanceof Error ? err.message : String(err)}`, LOG_CONTEXT);
      outcome = { status: 500, body: { error: 'internal' } };
    }
    res.statusCode = outcome.status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(outcome.body));
  }

  async #handle(req: RequestWithRawBody): Promise<Outcome> {
    const { options } = pluginContext();
    let event: WebhookEvent;
    try {
      const header = req.headers[SIGNATURE_HEADER.toLowerCase()];
      event = verifyWebhook(req.rawBody ?? '', Array.isArray(header) ? header[0] : header, typeof options.webhookSecret === 'string' ? options.webhookSecret : [...options.webhookSecret]);
    } catch (err) {
      if (err instanceof WebhookVerificationError) {
        Logger.warn(`Refused a webhook delivery: ${err.reason}`, LOG_CONTEXT);
        return { status: 400, body: { error: err.reason } };
      }
      throw err;
    }
    if (event.type !== 'order.paid') return { status: 200, body: { received: true, ignored: event.type } };
    return this.#settle(event);
  }

  /** Settles the Vendure payment whose transaction id is our order's id. */
  async #settle(event: WebhookEvent): Promise<Outcome> {
    const orderId = String(event.data.id ?? '');
    const reference = String(event.data.reference ?? '');
    const payment = await this.#connection.rawConnection.getRepository(Payment).findOne({ where: { transactionId: orderId }, relations: ['order', 'order.channels'] });
    if (!payment) {
      // An order of ours this shop made but has not committed yet is retried; one of another integration is not ours to handle.
      const known = reference && (await this.#connection.rawConnection.getRepository(Order).exist({ where: { code: reference } }));
      return known ? { status: 503, body: { error: 'payment_not_found_yet' } } : { status: 200, body: { received: true, ignored: 'unknown_order' } };
    }
    if (payment.order.code !== reference) {
      Logger.error(`order.paid ${event.id}: order ${orderId} has reference "${reference}" but pays Vendure order ${payment.order.code}`, LOG_CONTEXT);
      return { status: 200, body: { received: true, ignored: 'reference_mismatch' } };
    }
    if (payment.state === 'Settled') return { status: 200, body: { received: true, payment: payment.id, state: payment.state } };
    if (payment.state === 'Cancelled') return this.#voidPaidAfterCancel(payment);
    if (payment.state !== 'Authorized') return { status: 200, body: { received: true, ignored: `payment_${payment.state}` } };

    const channel = payment.order.channels.find((c) => c.code !== DEFAULT_CHANNEL_CODE) ?? payment.order.channels[0];
    // By token: the context then carries the whole channel (its tax zones), which the order's recalculation needs.
    const ctx = await this.#contexts.create({ apiType: 'admin', ...(channel ? { channelOrToken: channel.token } : {}) });
    const result = await this.#connection.withTransaction(ctx, (tx) => this.#orders.settlePayment(tx, payment.id));
    if ('errorCode' in result) {
      // A concurrent delivery may have settled it meanwhile: answer as the redelivery would.
      const now = await this.#connection.rawConnection.getRepository(Payment).findOne({ where: { id: payment.id } });
      if (now?.state === 'Settled') return { status: 200, body: { received: true, payment: payment.id, state: now.state } };
      Logger.error(`Could not settle payment ${payment.id}: ${String(result.message)}`, LOG_CONTEXT);
      return { status: 500, body: { error: 'settle_failed' } };
    }
    Logger.info(`Settled payment ${payment.id} of order ${payment.order.code} (${orderId})`, LOG_CONTEXT);
    return { status: 200, body: { received: true, payment: payment.id, state: result.state } };
  }

  /** The shop cancelled the payment while the customer was still paying: give the money back. */
  async #voidPaidAfterCancel(payment: Payment): Promise<Outcome> {
    const { clients } = pluginContext();
    try {
      await clients.orders.voidOrder({ id: payment.transactionId }, clients.callOptions());
      Logger.warn(`Order ${payment.transactionId} was paid after Vendure payment ${payment.id} was cancelled: voided it`, LOG_CONTEXT);
      return { status: 200, body: { received: true, payment: payment.id, state: payment.state, voided: true } };
    } catch (err) {
      Logger.error(`Could not void order ${payment.transactionId}: ${ConnectError.from(err).message}`, LOG_CONTEXT);
      return { status: 500, body: { error: 'void_failed' } };
    }
  }
}

// Decorators applied as calls: Node's type stripping runs no decorator syntax.
Inject(TransactionalConnection)(CheckoutWebhookController, undefined, 0);
Inject(OrderService)(CheckoutWebhookController, undefined, 1);
Inject(RequestContextService)(CheckoutWebhookController, undefined, 2);
const receive = Object.getOwnPropertyDescriptor(CheckoutWebhookController.prototype, 'receive')!;
Post()(CheckoutWebhookController.prototype, 'receive', receive);
Req()(CheckoutWebhookController.prototype, 'receive', 0);
Res()(CheckoutWebhookController.prototype, 'receive', 1);
Controller(DEFAULT_WEBHOOK_PATH)(CheckoutWebhookController);

/** Mounts the controller on another path (before Vendure boots). */
export function setWebhookPath(path: string): void {
  Controller(path)(CheckoutWebhookController);
}
