// Payment links: /v1/links[/:id], POST /v1/links/:id/deactivate.
import { seg, type HttpClient } from '../http-client.ts';
import { pagePromise, type PagePromise } from '../pagination.ts';
import type { ListJson, PaymentLink, PaymentLinkCreateParams, PaymentLinkListParams, RequestOptions } from '../types.ts';

/** `checkout.links` */
export class Links {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /** Creates a payment link: its page is the payment form, and each customer who starts to pay gets an order of their own. */
  create(params: PaymentLinkCreateParams, options?: RequestOptions): Promise<PaymentLink> {
    return this.#client.request({ method: 'POST', path: '/v1/links', body: params }, options);
  }

  /** Retrieves a payment link. */
  retrieve(id: string, options?: RequestOptions): Promise<PaymentLink> {
    return this.#client.request({ method: 'GET', path: `/v1/links/${seg(id)}` }, options);
  }

  /** Lists payment links, newest first; `for await` to walk every page. */
  list(params: PaymentLinkListParams = {}, options?: RequestOptions): PagePromise<PaymentLink> {
    return pagePromise((startingAfter) =>
      this.#client.request<ListJson<PaymentLink>>({ method: 'GET', path: '/v1/links', query: { ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) } }, options),
    );
  }

  /** Stops the link taking payment. */
  deactivate(id: string, options?: RequestOptions): Promise<PaymentLink> {
    return this.#client.request({ method: 'POST', path: `/v1/links/${seg(id)}/deactivate`, body: {} }, options);
  }
}
