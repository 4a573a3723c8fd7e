// The server SDK's client: `new Checkout(secretKey, {baseUrl})`, one property per API resource.
import { HttpClient, type CheckoutConfig } from './http-client.ts';
import { Customers } from './resources/customers.ts';
import { Disputes } from './resources/disputes.ts';
import { Events } from './resources/events.ts';
import { Links } from './resources/links.ts';
import { Orders } from './resources/orders.ts';
import { Payouts } from './resources/payouts.ts';
import { Refunds } from './resources/refunds.ts';
import { Subscriptions } from './resources/subscriptions.ts';
import { WebhookEndpoints } from './resources/webhook-endpoints.ts';

/**
 * A client of the /v1 REST API for the merchant's server. Every call that changes something sends
 * an Idempotency-Key (yours, or one generated per call) and is retried with that same key after a
 * network error, a timeout, a 5xx or an in-flight conflict, so a retried create never creates twice.
 *
 * ```ts
 * const checkout = new Checkout(process.env.CHECKOUT_SECRET_KEY!, { baseUrl: 'https://api.checkout.example' });
 * const order = await checkout.orders.create({ amount: 2500, currency: 'EUR', reference: 'INV-1001' });
 * ```
 */
export class Checkout {
  readonly orders: Orders;
  readonly refunds: Refunds;
  readonly payouts: Payouts;
  readonly disputes: Disputes;
  readonly customers: Customers;
  readonly subscriptions: Subscriptions;
  readonly links: Links;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly events: Events;

  /** @throws TypeError when the key or baseUrl is missing */
  constructor(secretKey: string, config: CheckoutConfig) {
    const client = new HttpClient(secretKey, config);
    this.orders = new Orders(client);
    this.refunds = new Refunds(client);
    this.payouts = new Payouts(client);
    this.disputes = new Disputes(client);
    this.customers = new Customers(client);
    this.subscriptions = new Subscriptions(client);
    this.links = new Links(client);
    this.webhookEndpoints = new WebhookEndpoints(client);
    this.events = new Events(client);
  }
}
