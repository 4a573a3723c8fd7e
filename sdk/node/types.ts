// The server SDK's own types (request options, pages); the API's JSON shapes are generated from the
// OpenAPI document into api-types.ts (`npm run generate`) and re-exported from here.
export type * from './api-types.ts';

/** Options of one call: override the client's defaults for this request only. */
export interface RequestOptions {
  /** Sent as Idempotency-Key on POST, PATCH and DELETE; generated (a UUID) when omitted, and reused on every retry. */
  idempotencyKey?: string;
  /** Milliseconds before one attempt is abandoned (and retried, if attempts remain). */
  timeout?: number;
  /** Retries after the first attempt, for failures that are safe to retry. */
  maxRetries?: number;
}

/** A page of a list: `{object: 'list', url, has_more, data}`. */
export interface ListJson<T> {
  object: 'list';
  url: string;
  has_more: boolean;
  data: T[];
}

/** The paging parameters every list takes (each list's own params type adds its filters). */
export interface ListParams {
  /** 1 to 100 (1 to 1000 for payout items); 10 when omitted (100 for payout items). */
  limit?: number;
  /** The id of the last object of the previous page. */
  starting_after?: string;
}

/** What a DELETE answers: `DeletedCustomer`, `DeletedCard` and `DeletedWebhookEndpoint` are of this shape. */
export interface DeletedJson<O extends string> {
  id: string;
  object: O;
  deleted: true;
}
