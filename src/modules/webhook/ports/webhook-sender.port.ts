/** An HTTP POST of a webhook. */
export interface WebhookRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Live deliveries must use https. (The address policy applies to both modes.) */
  readonly livemode: boolean;
  readonly timeoutMs: number;
  /** Aborts the send (the dispatcher is stopping): it resolves at once, `aborted` set. */
  readonly signal?: AbortSignal;
}

/** How the POST went. Never throws: failures are described. */
export interface WebhookResponse {
  /** null when no HTTP answer came. */
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  /** At most the first 1024 bytes of the response body, as UTF-8 text cut on a character boundary. */
  readonly excerpt: string;
  /** True when the request's signal aborted the send: whatever the endpoint did is unknown, and no attempt is to be recorded. */
  readonly aborted?: boolean;
}

/** Sends webhooks over HTTP, following no redirects. */
export interface WebhookSender {
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
