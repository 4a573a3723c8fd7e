// A TCP proxy on 127.0.0.1 in front of the service that can fail the first POST of a path in one
// of two ways: forward it and cut the client's connection instead of relaying the answer (the
// server has committed, the client never hears so), or answer 503 itself without forwarding it.
import net, { type AddressInfo, type Server, type Socket } from 'node:net';

/** How the first matching request fails. */
export type Fault = 'cut-after-commit' | 'answer-503';

export class CuttingProxy {
  /** The request line of every HTTP request that went through, in order. */
  readonly requests: string[] = [];
  /** Whether the fault has been played. */
  fired = false;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  private constructor(upstreamPort: number, fault: Fault, match: string) {
    this.#server = net.createServer((client) => {
      const upstream = net.connect(upstreamPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.once('close', () => this.#sockets.delete(s));
        s.on('error', () => undefined);
      }
      let cutAnswer = false;
      let dead = false;
      client.on('data', (chunk: Buffer) => {
        if (dead) return;
        const line = chunk.toString('latin1').split('\r\n', 1)[0] ?? '';
        if (/^(GET|POST|PATCH|DELETE) \//.test(line)) {
          this.requests.push(line);
          if (!this.fired && line.startsWith(`${match} `)) {
            this.fired = true;
            if (fault === 'answer-503') {
              dead = true;
              const body = JSON.stringify({ error: { type: 'api_error', code: 'service_unavailable', message: 'The proxy says no.', request_id: 'req_proxy503' } });
              client.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
              upstream.destroy();
              return;
            }
            cutAnswer = true;
          }
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (cutAnswer) {
          // The service answered, so it has committed; the client is never told.
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  /** Starts a proxy to 127.0.0.1:upstreamPort that plays `fault` on the first request whose line starts with `match` (e.g. "POST /v1/orders"). */
  static async start(upstreamPort: number, fault: Fault, match: string): Promise<CuttingProxy> {
    const proxy = new CuttingProxy(upstreamPort, fault, match);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    proxy.#port = (proxy.#server.address() as AddressInfo).port;
    return proxy;
  }

  get base(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
