// Webhook endpoints: /v1/webhook_endpoints[/:id], POST /v1/webhook_endpoints/:id/rotate_secret.
import { seg, type HttpClient } from '../http-client.ts';
import { pagePromise, type PagePromise } from '../pagination.ts';
import type {
  DeletedWebhookEndpoint,
  ListJson,
  RequestOptions,
  WebhookEndpoint,
  WebhookEndpointCreateParams,
  WebhookEndpointRotateSecretParams,
  WebhookEndpointWithSecret,
  WebhookEndpointUpdateParams,
} from '../types.ts';

/** `checkout.webhookEndpoints` */
export class WebhookEndpoints {
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  /** Creates an endpoint; the answer holds its signing secret (shown here and on rotation only). */
  create(params: WebhookEndpointCreateParams, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    return this.#client.request({ method: 'POST', path: '/v1/webhook_endpoints', body: params }, options);
  }

  /** Retrieves an endpoint. */
  retrieve(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.#client.request({ method: 'GET', path: `/v1/webhook_endpoints/${seg(id)}` }, options);
  }

  /** Lists the mode's endpoints (at most 16, one page). */
  list(options?: RequestOptions): PagePromise<WebhookEndpoint> {
    return pagePromise(() => this.#client.request<ListJson<WebhookEndpoint>>({ method: 'GET', path: '/v1/webhook_endpoints' }, options));
  }

  /** Changes the url, events or description, or disables (`disabled: true`) and re-enables it. */
  update(id: string, params: WebhookEndpointUpdateParams, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.#client.request({ method: 'PATCH', path: `/v1/webhook_endpoints/${seg(id)}`, body: params }, options);
  }

  /** Deletes an endpoint (not the default one: disable that instead). */
  del(id: string, options?: RequestOptions): Promise<DeletedWebhookEndpoint> {
    return this.#client.request({ method: 'DELETE', path: `/v1/webhook_endpoints/${seg(id)}` }, options);
  }

  /** Makes a new signing secret; the old one keeps signing too for overlap_seconds. A retry answers the same new secret. */
  rotateSecret(id: string, params: WebhookEndpointRotateSecretParams = {}, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    return this.#client.request({ method: 'POST', path: `/v1/webhook_endpoints/${seg(id)}/rotate_secret`, body: params }, options);
  }
}
