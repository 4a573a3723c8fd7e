// What the gateway is handed to serve on its port. It reads no environment and no configuration file of the
// service's: the process composition (server/service.ts) reads the configuration and hands these over.

/** Which proxies may name the client: none, the nearest N hops, or those at these addresses and CIDR networks. */
export type TrustProxy = false | number | readonly string[];

/** How long a client may take, and how many connections it may hold, on every protocol of the port. */
export interface ConnectionLimits {
  /** A new connection's first bytes, a request's headers (HTTP/1.1) or an h2c session's preface and SETTINGS must arrive within this. */
  readonly headersTimeoutMs: number;
  /** A request, headers and body, must be received within this of its first byte (HTTP/1.1) or of its stream opening (h2c). */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection or h2c session with no open stream is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** Most connections open at once, over all protocols; more are closed as soon as they are accepted. */
  readonly maxConnections: number;
}

/** The documented defaults of {@link ConnectionLimits} (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS, MAX_CONNECTIONS). */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 10_000,
};

/** What the gateway needs to serve on its port (`serveHttp`, http-server.ts). */
export interface GatewayServerOptions {
  /** The API base address, shown in the OpenAPI document. */
  readonly publicUrl: string;
  /** Level of the gateway's own pino logger, when the composition hands it no logger (fatal … trace, silent). */
  readonly logLevel: string;
  /** Which proxies in front may name the client in X-Forwarded-For; on HTTP/1.1 and h2c alike. */
  readonly trustProxy: TrustProxy;
  /** The port to listen on (0: any free one). */
  readonly port: number;
  /** The interface to bind to. */
  readonly host: string;
  /** Timeouts and the connection cap of every protocol of the port. */
  readonly connectionLimits: ConnectionLimits;
}
