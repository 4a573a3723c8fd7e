// Orders: POST /v1/orders, GET /v1/orders[/:id], POST /v1/orders/:id/{capture,void,expire}.
import { seg, type HttpClient } from '../http-client.ts';
import { pagePromise, type PagePromise } from '../pagination.ts';
import type { CreatedOrder, ListJson, Order, OrderCaptureParams, OrderCreateParams, OrderListParams, RequestOptions } from '../types.ts';

/** `checkout.orders` */
export class Orders {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /**
   * Creates an order. Retried safely: every attempt carries the same Idempotency-Key.
   * @throws InvalidRequestError for a bad amount, currency, reference, …
   */
  create(params: OrderCreateParams, options?: RequestOptions): Promise<CreatedOrder> {
    return this.#client.request({ method: 'POST', path: '/v1/orders', body: params }, options);
  }

  /** Retrieves an order by id. @throws InvalidRequestError (404 resource_missing) */
  retrieve(id: string, options?: RequestOptions): Promise<Order> {
    return this.#client.request({ method: 'GET', path: `/v1/orders/${seg(id)}` }, options);
  }

  /** Lists orders, newest first; `for await` over the answer to walk every page. */
  list(params: OrderListParams = {}, options?: RequestOptions): PagePromise<Order> {
    return pagePromise((startingAfter) =>
      this.#client.request<ListJson<Order>>({ method: 'GET', path: '/v1/orders', query: { ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) } }, options),
    );
  }

  /** Captures an authorized order (capture_method manual), in full or in part. */
  capture(id: string, params: OrderCaptureParams = {}, options?: RequestOptions): Promise<Order> {
    return this.#client.request({ method: 'POST', path: `/v1/orders/${seg(id)}/capture`, body: params }, options);
  }

  /** Voids an authorized order: the authorization is released. */
  void(id: string, options?: RequestOptions): Promise<Order> {
    return this.#client.request({ method: 'POST', path: `/v1/orders/${seg(id)}/void`, body: {} }, options);
  }

  /**
   * Expires an open (pending or failed) order now, as when its time runs out: its checkout takes no
   * payment any more. An expired order is answered unchanged; a paid or authorized one is refused
   * (409 order_not_open: void or refund it instead), and so is one whose card payment is in flight
   * (409 payment_in_progress: retry).
   */
  expire(id: string, options?: RequestOptions): Promise<Order> {
    return this.#client.request({ method: 'POST', path: `/v1/orders/${seg(id)}/expire`, body: {} }, options);
  }
}
