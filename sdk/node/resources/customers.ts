// Customers and their saved cards: /v1/customers[/:id], /v1/customers/:id/cards[/:card].
import { seg, type HttpClient } from '../http-client.ts';
import { pagePromise, type PagePromise } from '../pagination.ts';
import type {
  CardCreateParams,
  Customer,
  CustomerCreateParams,
  CustomerListParams,
  CustomerUpdateParams,
  DeletedCard,
  DeletedCustomer,
  ListJson,
  RequestOptions,
  SavedCard,
} from '../types.ts';

/** `checkout.customers.cards` */
export class CustomerCards {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /**
   * Vaults a card for a customer, from a token (tok_…) or raw card fields (PCI-compliant servers only).
   * @throws CardError (card_declined) when the issuer refuses the card
   */
  create(customerId: string, params: CardCreateParams, options?: RequestOptions): Promise<SavedCard> {
    return this.#client.request({ method: 'POST', path: `/v1/customers/${seg(customerId)}/cards`, body: params }, options);
  }

  /** Lists the customer's saved cards (at most 50, one page). */
  list(customerId: string, options?: RequestOptions): PagePromise<SavedCard> {
    return pagePromise(() => this.#client.request<ListJson<SavedCard>>({ method: 'GET', path: `/v1/customers/${seg(customerId)}/cards` }, options));
  }

  /** Retrieves a saved card. */
  retrieve(customerId: string, cardId: string, options?: RequestOptions): Promise<SavedCard> {
    return this.#client.request({ method: 'GET', path: `/v1/customers/${seg(customerId)}/cards/${seg(cardId)}` }, options);
  }

  /** Deletes a saved card; its encrypted number is erased. */
  del(customerId: string, cardId: string, options?: RequestOptions): Promise<DeletedCard> {
    return this.#client.request({ method: 'DELETE', path: `/v1/customers/${seg(customerId)}/cards/${seg(cardId)}` }, options);
  }
}

/** `checkout.customers` */
export class Customers {
  readonly #client: HttpClient;
  readonly cards: CustomerCards;

  constructor(client: HttpClient) {
    this.#client = client;
    this.cards = new CustomerCards(client);
  }

  /** Creates a customer. */
  create(params: CustomerCreateParams = {}, options?: RequestOptions): Promise<Customer> {
    return this.#client.request({ method: 'POST', path: '/v1/customers', body: params }, options);
  }

  /** Retrieves a customer. */
  retrieve(id: string, options?: RequestOptions): Promise<Customer> {
    return this.#client.request({ method: 'GET', path: `/v1/customers/${seg(id)}` }, options);
  }

  /** Changes email, name, reference or metadata ("" clears a field; metadata keys are merged). */
  update(id: string, params: CustomerUpdateParams, options?: RequestOptions): Promise<Customer> {
    return this.#client.request({ method: 'POST', path: `/v1/customers/${seg(id)}`, body: params }, options);
  }

  /** Deletes a customer: its saved cards are erased and its subscriptions canceled. */
  del(id: string, options?: RequestOptions): Promise<DeletedCustomer> {
    return this.#client.request({ method: 'DELETE', path: `/v1/customers/${seg(id)}` }, options);
  }

  /** Lists customers, newest first; `for await` to walk every page. */
  list(params: CustomerListParams = {}, options?: RequestOptions): PagePromise<Customer> {
    return pagePromise((startingAfter) =>
      this.#client.request<ListJson<Customer>>({ method: 'GET', path: '/v1/customers', query: { ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) } }, options),
    );
  }
}
