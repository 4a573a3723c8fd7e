// A TCP relay in front of the machine's Postgres that a test cuts and restores, to see the service
// while its database cannot be reached (the machine's Postgres keeps running for other tests).
import net from 'node:net';
import { TEST_POSTGRES_URL } from './database.ts';

/** Options of {@link CuttablePostgres}. */
export interface CuttablePostgresOptions {
  /**
   * Whether, once hung, a connection the client closes stays open on this side, as behind a Postgres that is
   * stopped or a network that drops everything: the client's goodbye is never answered. By default the relay's
   * socket closes its side when the client closes its own.
   */
  readonly hangHalfOpen?: boolean;
}

/**
 * A TCP relay in front of Postgres that the test can cut (every connection dropped, new ones refused),
 * hang (nothing dropped, nothing answered) and restore.
 */
export class CuttablePostgres {
  readonly #target = new URL(TEST_POSTGRES_URL);
  readonly #hangHalfOpen: boolean;
  readonly #sockets = new Set<net.Socket>();
  readonly #pairs = new Set<readonly [net.Socket, net.Socket]>();
  #hung = false;
  /** Connections accepted and bytes sent by clients since hang(): what waits on the hung Postgres. */
  #heard = 0;
  #server: net.Server | undefined;
  port = 0;

  constructor(options: CuttablePostgresOptions = {}) {
    this.#hangHalfOpen = options.hangHalfOpen ?? false;
  }

  async up(): Promise<void> {
    this.#hung = false;
    // Half-open: a client's end is passed on by the pipe while relayed, and answered by nobody once hung.
    this.#server = net.createServer({ allowHalfOpen: this.#hangHalfOpen }, (client) => {
      if (this.#hung) {
        // Accepted and never answered: the client waits for Postgres's reply to its startup message.
        this.#sockets.add(client);
        this.#heard += 1;
        client.on('error', () => undefined);
        client.once('close', () => this.#sockets.delete(client));
        client.on('data', () => (this.#heard += 1));
        return;
      }
      // The embedded Postgres listens on a unix socket only: its URL's host is the socket's directory, percent-encoded.
      const upstream = this.#target.hostname.startsWith('%2F')
        ? net.connect({ path: `${decodeURIComponent(this.#target.hostname)}/.s.PGSQL.${this.#target.port || 5432}` })
        : net.connect({ host: this.#target.hostname, port: Number(this.#target.port || 5432) });
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('error', () => undefined);
        socket.once('close', () => {
          this.#sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      const pair = [client, upstream] as const;
      this.#pairs.add(pair);
      client.once('close', () => this.#pairs.delete(pair));
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      this.#server!.once('error', reject);
      this.#server!.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (this.#server.address() as net.AddressInfo).port;
  }

  /**
   * A Postgres that hangs: every open connection stays open and nothing more passes either way (a query in
   * flight, or sent later, never gets its answer); new connections are accepted and never answered.
   */
  hang(): void {
    this.#hung = true;
    this.#heard = 0;
    for (const [client, upstream] of this.#pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      upstream.pause();
      // What the client sends now is read and dropped, and counted.
      client.on('data', () => (this.#heard += 1));
      client.resume();
    }
  }

  /** How many times, since hang(), a client opened a connection or sent a query (or part of one) that will never be answered. */
  get heard(): number {
    return this.#heard;
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
