import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import type { AddressPolicy } from '../../ports/address-policy.port.ts';
import type { WebhookRequest, WebhookResponse, WebhookSender } from '../../ports/webhook-sender.port.ts';

/** Most bytes of a response body the delivery log keeps. */
export const EXCERPT_BYTES = 1024;
// A UTF-8 character is at most 4 bytes: reading 3 past the limit shows whether the limit splits one.
const READ_BYTES = EXCERPT_BYTES + 3;

/** The longest prefix of at most max bytes that does not end inside a UTF-8 character. */
function utf8Prefix(bytes: Buffer, max: number): Buffer {
  if (bytes.length <= max) return bytes;
  let end = max;
  // bytes[end] is the first byte left out; while it continues a character, that character is cut: drop it whole.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end);
}

/**
 * The start of a response body as text for the delivery log: at most
 * EXCERPT_BYTES of UTF-8, cut on a character boundary, invalid bytes and NUL
 * (which Postgres text cannot hold) replaced by U+FFFD.
 */
export function responseExcerpt(body: Buffer): string {
  const text = utf8Prefix(body, EXCERPT_BYTES).toString('utf8').replaceAll('\0', '\uFFFD');
  // Each replacement character takes 3 bytes where the byte it replaced took 1: cut the valid text again.
  return utf8Prefix(Buffer.from(text, 'utf8'), EXCERPT_BYTES).toString('utf8');
}

/**
 * Resolves like dns.lookup but drops the addresses the policy refuses.
 * Because the socket connects to exactly the address this returns, a name
 * that resolves differently on a second lookup (DNS rebinding) cannot slip through.
 */
function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const refusals: string[] = [];
      const allowed = (addresses as dns.LookupAddress[]).filter((a) => {
        const refusal = policy.refuseAddress(a.address);
        if (refusal !== undefined) refusals.push(refusal);
        return refusal === undefined;
      });
      if (allowed.length === 0) {
        const refused = Object.assign(new Error(`refused: ${hostname} resolves only to addresses webhooks may not reach (${refusals.join('; ')})`), { code: 'EFORBIDDENADDRESS' });
        return callback(refused, '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/**
 * WebhookSender on node:http(s): no redirects followed, a hard timeout, and
 * the address policy on every delivery of both modes: a literal address is
 * judged before connecting, a name by what it resolves to, and the address
 * actually connected once more before a byte is sent. A request's signal
 * aborts it at any point (the answer then reports `aborted`).
 */
export class NodeHttpWebhookSender implements WebhookSender {
  readonly #policy: AddressPolicy;
  readonly #agents: { readonly http: http.Agent; readonly https: https.Agent };

  constructor(policy: AddressPolicy) {
    this.#policy = policy;
    const lookup = guardedLookup(policy);
    this.#agents = {
      http: new http.Agent({ keepAlive: true, maxSockets: 16, lookup }),
      https: new https.Agent({ keepAlive: true, maxSockets: 16, lookup }),
    };
  }

  send(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise((resolve) => {
      let settled = false;
      // Removes the abort listener once the send is over.
      const over = new AbortController();
      const finish = (response: Omit<WebhookResponse, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        over.abort();
        resolve({ ...response, durationMs: elapsed() });
      };
      let url: URL;
      try {
        url = new URL(request.url);
      } catch {
        return finish({ statusCode: null, error: 'invalid URL', excerpt: '' });
      }
      const secure = url.protocol === 'https:';
      if (request.livemode && !secure) return finish({ statusCode: null, error: 'live-mode endpoints must use https', excerpt: '' });
      // A literal address is connected without a lookup: judge it here.
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
      const refusal = net.isIP(host) ? this.#policy.refuseAddress(host) : undefined;
      if (refusal !== undefined) return finish({ statusCode: null, error: `refused: ${refusal}`, excerpt: '' });
      // Aborted (the dispatcher is stopping): no answer is known, so no attempt is recorded; the caller gives the lease back.
      const aborted = () => finish({ statusCode: null, error: 'aborted: the dispatcher is stopping', excerpt: '', aborted: true });
      if (request.signal?.aborted) return aborted();
      const body = Buffer.from(request.body);
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.#agents.https : this.#agents.http,
        headers: { ...request.headers, 'content-type': 'application/json', 'content-length': String(body.length) },
        timeout: request.timeoutMs,
      });
      const timer = setTimeout(() => {
        req.destroy(new Error(`timed out after ${request.timeoutMs} ms`));
      }, request.timeoutMs);
      req.on('socket', (socket) => {
        // Belt and braces: judge the address actually connected, not only what the lookup said. This
        // listener is added before the request's own write waits for 'connect', so it runs first.
        const judge = () => {
          const connected = socket.remoteAddress === undefined ? undefined : this.#policy.refuseAddress(socket.remoteAddress);
          if (connected !== undefined) req.destroy(new Error(`refused: connected address ${connected}`));
        };
        // A kept-alive socket comes back already connected: 'connect' will not fire again, and a
        // listener added to it per request would pile up for the socket's lifetime.
        if (socket.connecting) socket.once('connect', judge);
        else judge();
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < READ_BYTES) chunks.push(chunk.subarray(0, READ_BYTES - size));
          size += chunk.length;
        });
        res.on('end', () => {
          clearTimeout(timer);
          finish({ statusCode: res.statusCode ?? null, error: null, excerpt: responseExcerpt(Buffer.concat(chunks)) });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          finish({ statusCode: res.statusCode ?? null, error: err.message, excerpt: responseExcerpt(Buffer.concat(chunks)) });
        });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        finish({ statusCode: null, error: (err as Error).message, excerpt: '' });
      });
      const onAbort = () => {
        clearTimeout(timer);
        aborted();
        req.destroy();
      };
      request.signal?.addEventListener('abort', onAbort, { once: true, signal: over.signal });
      req.end(body);
    });
  }

  /** Closes pooled connections. */
  close(): void {
    for (const agent of Object.values(this.#agents)) agent.destroy();
  }
}
