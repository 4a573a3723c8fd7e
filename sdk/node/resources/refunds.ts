// Refunds: POST /v1/orders/:id/refunds.
import { seg, type HttpClient } from '../http-client.ts';
import type { Refund, RefundCreateParams, RequestOptions } from '../types.ts';

/** `checkout.refunds` */
export class Refunds {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /** Refunds a paid order, in full (amount omitted) or in part. Retried safely with one Idempotency-Key. */
  create(orderId: string, params: RefundCreateParams, options?: RequestOptions): Promise<Refund> {
    return this.#client.request({ method: 'POST', path: `/v1/orders/${seg(orderId)}/refunds`, body: params }, options);
  }
}
