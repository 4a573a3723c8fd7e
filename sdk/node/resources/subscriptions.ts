// Subscriptions: /v1/subscriptions[/:id], POST /v1/subscriptions/:id/{cancel,pause,resume}.
import { seg, type HttpClient } from '../http-client.ts';
import { pagePromise, type PagePromise } from '../pagination.ts';
import type {
  ListJson,
  RequestOptions,
  Subscription,
  SubscriptionCancelParams,
  SubscriptionCreateParams,
  SubscriptionListParams,
  SubscriptionUpdateParams,
} from '../types.ts';

/** `checkout.subscriptions` */
export class Subscriptions {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /** Starts charging a customer's saved card every interval. */
  create(params: SubscriptionCreateParams, options?: RequestOptions): Promise<Subscription> {
    return this.#client.request({ method: 'POST', path: '/v1/subscriptions', body: params }, options);
  }

  /** Retrieves a subscription. */
  retrieve(id: string, options?: RequestOptions): Promise<Subscription> {
    return this.#client.request({ method: 'GET', path: `/v1/subscriptions/${seg(id)}` }, options);
  }

  /** Lists subscriptions, newest first; `for await` to walk every page. */
  list(params: SubscriptionListParams = {}, options?: RequestOptions): PagePromise<Subscription> {
    return pagePromise((startingAfter) =>
      this.#client.request<ListJson<Subscription>>({ method: 'GET', path: '/v1/subscriptions', query: { ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) } }, options),
    );
  }

  /** Charges another saved card of the customer from now on. */
  update(id: string, params: SubscriptionUpdateParams, options?: RequestOptions): Promise<Subscription> {
    return this.#client.request({ method: 'POST', path: `/v1/subscriptions/${seg(id)}`, body: params }, options);
  }

  /** Cancels now, or at the period's end with `{at_period_end: true}`. */
  cancel(id: string, params: SubscriptionCancelParams = {}, options?: RequestOptions): Promise<Subscription> {
    return this.#client.request({ method: 'POST', path: `/v1/subscriptions/${seg(id)}/cancel`, body: params }, options);
  }

  /** Stops charging until resumed. */
  pause(id: string, options?: RequestOptions): Promise<Subscription> {
    return this.#client.request({ method: 'POST', path: `/v1/subscriptions/${seg(id)}/pause`, body: {} }, options);
  }

  /** Charges again from the next cycle. */
  resume(id: string, options?: RequestOptions): Promise<Subscription> {
    return this.#client.request({ method: 'POST', path: `/v1/subscriptions/${seg(id)}/resume`, body: {} }, options);
  }
}
