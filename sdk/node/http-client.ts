// One call of the REST API over the global fetch: the key, the Idempotency-Key (generated once and
// kept for every retry), a timeout per attempt, and retries with backoff for what is safe to retry.
import { ApiConnectionError, ApiError, type CheckoutError, errorFromResponse } from './errors.ts';
import { backoffDelay, DEFAULT_MAX_RETRIES, isRetryable, MAX_RETRY_AFTER_MS, parseRetryAfter, type AttemptOutcome } from './retry.ts';
import type { RequestOptions } from './types.ts';

/** Milliseconds one attempt may take before it is abandoned. */
export const DEFAULT_TIMEOUT_MS = 80_000;

/** How the client is set up; only baseUrl is required. */
export interface CheckoutConfig {
  /** Where the service's REST API is, e.g. https://api.checkout.example (the api_base_url of your sandbox). */
  baseUrl: string;
  /** Milliseconds per attempt; 80 s by default. */
  timeout?: number;
  /** Retries after the first attempt; 2 by default. 0 turns retries off. */
  maxRetries?: number;
  /** For tests and instrumentation: the fetch to use (the global one by default). */
  fetch?: typeof fetch;
  /** For tests: how to wait between attempts. */
  sleep?: (ms: number) => Promise<void>;
  /** For tests: the jitter's uniform draw in [0, 1). */
  random?: () => number;
  /** For tests: how idempotency keys are made (crypto.randomUUID by default). */
  idempotencyKey?: () => string;
}

/** One call: method, path (already encoded), query and JSON body. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: object | undefined;
  body?: object | undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A UUID for an Idempotency-Key: the global crypto's (Node 19+, browsers, Deno, Bun), else node:crypto's (Node 18). */
async function randomKey(): Promise<string> {
  const webCrypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof webCrypto?.randomUUID === 'function') return webCrypto.randomUUID();
  const { randomUUID } = await import('node:crypto');
  return randomUUID();
}

/** The transport of every resource: sends, maps errors, retries. */
export class HttpClient {
  readonly #key: string;
  readonly #baseUrl: string;
  readonly #timeout: number;
  readonly #maxRetries: number;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #newKey: () => string | Promise<string>;

  /** @throws TypeError when the key or the base URL is missing, or the base URL carries a user or password. */
  constructor(secretKey: string, config: CheckoutConfig) {
    if (typeof secretKey !== 'string' || secretKey === '') throw new TypeError('new Checkout(secretKey, {baseUrl}) needs your secret key (sk_test_… or sk_live_…) as its first argument.');
    if (!config || typeof config.baseUrl !== 'string' || !/^https?:\/\//.test(config.baseUrl)) {
      throw new TypeError('new Checkout(secretKey, {baseUrl}) needs baseUrl, the http(s) URL of the service\'s REST API (your sandbox\'s api_base_url).');
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(config.baseUrl);
    } catch {
      parsed = undefined;
    }
    if (!parsed) throw new TypeError('new Checkout(secretKey, {baseUrl}) needs baseUrl, the http(s) URL of the service\'s REST API (your sandbox\'s api_base_url); the one given is not a URL.');
    // A user or password in the URL would be repeated in every error message and log line that names the service;
    // the secret key is what authenticates. (The URL itself is not repeated here, so neither are they.)
    if (parsed.username !== '' || parsed.password !== '') {
      throw new TypeError(
        'new Checkout(secretKey, {baseUrl}) refuses a baseUrl with a user or password in it (http://user:pass@host): the secret key is what authenticates, and credentials in the URL would show in error messages. Give the URL without them.',
      );
    }
    this.#key = secretKey;
    this.#baseUrl = config.baseUrl.replace(/\/+$/, '');
    this.#timeout = config.timeout ?? DEFAULT_TIMEOUT_MS;
    this.#maxRetries = config.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#fetch = config.fetch ?? ((input, init) => fetch(input, init));
    this.#sleep = config.sleep ?? sleep;
    this.#random = config.random ?? Math.random;
    this.#newKey = config.idempotencyKey ?? randomKey;
  }

  /**
   * Sends a request and answers its parsed JSON. POST, PATCH and DELETE carry an Idempotency-Key
   * (the caller's, or one generated here), the same on every attempt, so a retry after a lost
   * answer gets the first answer instead of doing the work twice.
   * @throws CheckoutError (a subclass) for an error answer or when no answer came after the retries
   */
  async request<T>(req: ApiRequest, options: RequestOptions = {}): Promise<T> {
    const maxRetries = options.maxRetries ?? this.#maxRetries;
    const timeout = options.timeout ?? this.#timeout;
    const headers: Record<string, string> = { authorization: `Bearer ${this.#key}`, accept: 'application/json' };
    if (req.method !== 'GET') headers['idempotency-key'] = options.idempotencyKey ?? (await this.#newKey());
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    const url = this.#url(req.path, req.query);

    for (let attempt = 0; ; attempt++) {
      const { outcome, error, retryAfterMs, value } = await this.#attempt<T>(url, req.method, headers, body, timeout);
      if (outcome === undefined) return value as T;
      const waitable = retryAfterMs === undefined || retryAfterMs <= MAX_RETRY_AFTER_MS;
      if (attempt >= maxRetries || !isRetryable(outcome) || !waitable) throw error;
      await this.#sleep(backoffDelay(attempt + 1, this.#random, retryAfterMs));
    }
  }

  async #attempt<T>(
    url: string,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    timeout: number,
  ): Promise<{ outcome?: AttemptOutcome; error?: CheckoutError; retryAfterMs?: number | undefined; value?: T }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeout);
    try {
      const res = await this.#fetch(url, { method, headers, body, signal: controller.signal });
      const text = await res.text();
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = text;
      }
      const requestId = res.headers.get('request-id');
      if (res.ok) {
        if (typeof json === 'object' && json !== null) return { value: json as T };
        const error = new ApiError({ message: `The service answered ${res.status} with a body that is not JSON${requestId ? ` (request ${requestId})` : ''}.`, status: res.status, requestId: requestId ?? undefined, raw: json });
        return { outcome: { kind: 'response', status: res.status }, error };
      }
      const error = errorFromResponse(res.status, json, requestId);
      return { outcome: { kind: 'response', status: res.status, code: error.code }, error, retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), Date.now()) };
    } catch (cause) {
      const timedOut = controller.signal.aborted;
      const message = timedOut
        ? `No answer from ${method} ${url} within ${timeout} ms. Raise the timeout option if the call is expected to take longer.`
        : `Could not reach the service at ${this.#baseUrl} (${method} ${url}): ${cause instanceof Error ? cause.message : String(cause)}. Check baseUrl and the network.`;
      return { outcome: { kind: timedOut ? 'timeout' : 'network' }, error: new ApiConnectionError({ message, cause }) };
    } finally {
      clearTimeout(timer);
    }
  }

  #url(path: string, query: object | undefined): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) search.append(name, String(value));
    }
    const qs = search.toString();
    return `${this.#baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }
}

/** One path segment, escaped: an id is never allowed to change the route. */
export const seg = (id: string): string => encodeURIComponent(id);
