// Disputes: GET /v1/disputes[/:id], POST /v1/disputes/:id/submit.
import { seg, type HttpClient } from '../http-client.ts';
import { pagePromise, type PagePromise } from '../pagination.ts';
import type { Dispute, DisputeListParams, DisputeSubmitParams, ListJson, RequestOptions } from '../types.ts';

/** `checkout.disputes` */
export class Disputes {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /** Retrieves a dispute. */
  retrieve(id: string, options?: RequestOptions): Promise<Dispute> {
    return this.#client.request({ method: 'GET', path: `/v1/disputes/${seg(id)}` }, options);
  }

  /** Lists disputes, newest first; `for await` to walk every page. */
  list(params: DisputeListParams = {}, options?: RequestOptions): PagePromise<Dispute> {
    return pagePromise((startingAfter) =>
      this.#client.request<ListJson<Dispute>>({ method: 'GET', path: '/v1/disputes', query: { ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) } }, options),
    );
  }

  /** Submits the order's evidence (with any given here) for a dispute that needs a response. */
  submit(id: string, params: DisputeSubmitParams = {}, options?: RequestOptions): Promise<Dispute> {
    return this.#client.request({ method: 'POST', path: `/v1/disputes/${seg(id)}/submit`, body: params }, options);
  }
}
