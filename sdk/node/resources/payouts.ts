// Payouts: GET /v1/payouts[/:id], GET /v1/payouts/:id/items.
import { seg, type HttpClient } from '../http-client.ts';
import { pagePromise, type PagePromise } from '../pagination.ts';
import type { ListJson, Payout, PayoutItem, PayoutItemListParams, PayoutWithItems, PayoutListParams, RequestOptions } from '../types.ts';

/** `checkout.payouts` */
export class Payouts {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /** Retrieves a payout with the first page of its items. */
  retrieve(id: string, options?: RequestOptions): Promise<PayoutWithItems> {
    return this.#client.request({ method: 'GET', path: `/v1/payouts/${seg(id)}` }, options);
  }

  /** Lists payouts, newest first; `for await` to walk every page. */
  list(params: PayoutListParams = {}, options?: RequestOptions): PagePromise<Payout> {
    return pagePromise((startingAfter) =>
      this.#client.request<ListJson<Payout>>({ method: 'GET', path: '/v1/payouts', query: { ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) } }, options),
    );
  }

  /** Lists a payout's items (up to 1,000 a page), paging by the item's id; `for await` to reconcile them all. */
  listItems(payoutId: string, params: PayoutItemListParams = {}, options?: RequestOptions): PagePromise<PayoutItem> {
    return pagePromise((startingAfter) =>
      this.#client.request<ListJson<PayoutItem>>(
        { method: 'GET', path: `/v1/payouts/${seg(payoutId)}/items`, query: { ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) } },
        options,
      ),
    );
  }
}
