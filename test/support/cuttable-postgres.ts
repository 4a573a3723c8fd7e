// A TCP relay in front of the machine's Postgres that a test cuts and restores, to see the service
// while its database cannot be reached (the machine's Postgres keeps running for other tests).
import net from 'node:net';
import { TEST_POSTGRES_URL } from './database.ts';

/** A TCP relay in front of Postgres that the test can cut (every connection dropped, new ones refused) and restore. */
export class CuttablePostgres {
  readonly #target = new URL(TEST_POSTGRES_URL);
  readonly #sockets = new Set<net.Socket>();
  #server: net.Server | undefined;
  port = 0;

  async up(): Promise<void> {
    this.#server = net.createServer((client) => {
      const upstream = net.connect({ host: this.#target.hostname, port: Number(this.#target.port || 5432) });
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('error', () => undefined);
        socket.once('close', () => {
          this.#sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      this.#server!.once('error', reject);
      this.#server!.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (this.#server.address() as net.AddressInfo).port;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A connection URL like `url` but through the relay. */
  url(url: string): string {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(this.port);
    return through.toString();
  }
}
