import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { WebhookRequest, WebhookResponse, WebhookSender } from '../../ports/webhook-sender.port.ts';
import { isForbiddenAddress } from './address-policy.ts';

const EXCERPT_BYTES = 512;

/**
 * Resolves like dns.lookup but refuses forbidden addresses. Because the
 * socket connects to exactly the address this returns, a name that resolves
 * differently on a second lookup (DNS rebinding) cannot slip through.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const allowed = list.filter((a) => !isForbiddenAddress(a.address));
    if (allowed.length === 0) {
      const refused = Object.assign(new Error(`refused to connect to ${hostname}: it resolves only to private or reserved addresses`), { code: 'EFORBIDDENADDRESS' });
      return callback(refused, '', 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0]!.address, allowed[0]!.family);
  });
};

/** WebhookSender on node:http(s): no redirects followed, a hard timeout, the address policy in live mode. */
export class NodeHttpWebhookSender implements WebhookSender {
  readonly #agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 16 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 16 }),
    guardedHttps: new https.Agent({ keepAlive: true, maxSockets: 16, lookup: guardedLookup }),
  };

  send(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise((resolve) => {
      let settled = false;
      const finish = (response: Omit<WebhookResponse, 'durationMs'>) => {
        if (settled) return;
        settled = true;
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
      if (request.livemode && isForbiddenAddress(url.hostname.replace(/^\[|\]$/g, ''))) {
        return finish({ statusCode: null, error: 'refused: private or reserved address', excerpt: '' });
      }
      const agent = request.livemode ? this.#agents.guardedHttps : secure ? this.#agents.https : this.#agents.http;
      const body = Buffer.from(request.body);
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent,
        headers: { ...request.headers, 'content-type': 'application/json', 'content-length': String(body.length) },
        timeout: request.timeoutMs,
      });
      const timer = setTimeout(() => {
        req.destroy(new Error(`timed out after ${request.timeoutMs} ms`));
      }, request.timeoutMs);
      req.on('socket', (socket) => {
        if (!request.livemode) return;
        // Belt and braces: judge the address actually connected, not only what the lookup said.
        const judge = () => {
          if (socket.remoteAddress && isForbiddenAddress(socket.remoteAddress)) {
            req.destroy(new Error(`refused: connected address ${socket.remoteAddress} is private or reserved`));
          }
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
          if (size < EXCERPT_BYTES) chunks.push(chunk.subarray(0, EXCERPT_BYTES - size));
          size += chunk.length;
        });
        res.on('end', () => {
          clearTimeout(timer);
          finish({ statusCode: res.statusCode ?? null, error: null, excerpt: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          finish({ statusCode: res.statusCode ?? null, error: err.message, excerpt: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        finish({ statusCode: null, error: (err as Error).message, excerpt: '' });
      });
      req.end(body);
    });
  }

  /** Closes pooled connections. */
  close(): void {
    for (const agent of Object.values(this.#agents)) agent.destroy();
  }
}
