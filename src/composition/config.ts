import path from 'node:path';
import { parseWorkerNames, type WorkerName } from './worker-names.ts';
import { parseKeyList, type KeyEncryptionKey } from '../kernel/adapters/crypto/aes-gcm-key-ring.ts';
/** Settings of the service, read from the environment with local defaults. */
export interface Config {
  /**
   * DATABASE_URL: the Postgres connection string; undefined when unset, and the process then uses the embedded
   * Postgres in {@link Config.embeddedPostgres} (src/composition/dependencies.ts, docs/embedded-postgres.md).
   */
  readonly databaseUrl: string | undefined;
  /** The embedded Postgres used without DATABASE_URL. */
  readonly embeddedPostgres: EmbeddedPostgresConfig;
  /** Most Postgres connections the API keeps open (the webhook dispatcher has up to 10 more of its own). */
  readonly databasePoolMax: number;
  /**
   * DATABASE_NAMED_STATEMENTS: whether the hot path uses named prepared statements (true); false behind
   * PgBouncer in transaction mode before 1.21 (or with max_prepared_statements = 0), which cannot carry them.
   */
  readonly databaseNamedStatements: boolean;
  /**
   * NATS server URL, or a comma-separated list of the servers of a cluster (the client picks one and fails over
   * to the others): events travel through JetStream. Undefined when NATS_URL is unset or empty: events travel
   * through the event stream in Postgres, for a single node (see {@link eventsMode}).
   */
  readonly natsUrl: string | undefined;
  /** NATS_STREAM_REPLICAS: copies JetStream keeps of the event stream (3 on a three-node cluster; 1 on a single server). */
  readonly natsStreamReplicas: number;
  /** HTTP port of the gateway (REST, checkout pages, Connect, gRPC-Web, and gRPC over h2c). */
  readonly port: number;
  /** Interface the gateway binds to. */
  readonly host: string;
  /** The API base address handed to merchants. */
  readonly publicUrl: string;
  /** The default checkout host on which checkout URLs are built. */
  readonly checkoutUrl: string;
  /** JetStream stream that carries events. */
  readonly natsStream: string;
  /** Subject prefix of events on NATS. */
  readonly natsSubjectPrefix: string;
  /** Log level of the gateway (pino): fatal, error, warn, info, debug, trace or silent. */
  readonly logLevel: string;
  /** Whether `serve` also runs the webhook dispatcher (run it apart with `checkout dispatch`). */
  readonly runDispatcher: boolean;
  /** The workers `serve` runs beside the API (SERVE_WORKERS: a comma list, `all` or `none`). */
  readonly serveWorkers: readonly WorkerName[];
  /** How long a webhook endpoint may take to answer. */
  readonly webhookTimeoutMs: number;
  /** First webhook retry delay; later ones double up to webhookRetryCapMs. */
  readonly webhookRetryBaseMs: number;
  readonly webhookRetryCapMs: number;
  /**
   * How long a dispatcher owns a delivery it took; if it dies mid-delivery the
   * delivery falls due again after this (must exceed the timeout).
   */
  readonly webhookLeaseMs: number;
  /** Webhook deliveries in flight at once per dispatcher: in all, to one endpoint, to one merchant's endpoints. */
  readonly webhookConcurrency: { readonly total: number; readonly perEndpoint: number; readonly perMerchant: number };
  /** Limits that keep slow or idle clients from holding connections (see gateway/listen.ts). */
  readonly connectionLimits: ConnectionLimits;
  /**
   * Whether webhooks may reach loopback and private (RFC 1918, fc00::/7) addresses:
   * for local development and the test suites only; off by default.
   */
  readonly webhookAllowPrivateNetworks: boolean;
  /** Card-testing limits of the checkout's payment methods (0 switches a scope off). */
  readonly cardVelocity: {
    readonly windowMs: number;
    readonly perClientAddress: number;
    readonly perMerchant: number;
    readonly declineWeight: number;
  };
  /**
   * Which proxies in front may name the client in X-Forwarded-For: none
   * (false), the nearest N hops (a number), or those at these addresses and
   * networks. The client's address is the first one, counted from the socket,
   * that is not a trusted proxy.
   */
  readonly trustProxy: TrustProxy;
  /** API rate limit per key: tokens per second and bucket size (perSecond 0 switches it off). */
  readonly rateLimit: { readonly perSecond: number; readonly burst: number };
  /** Failed authentications allowed per client address in a window (limit 0 switches it off). */
  readonly authFailures: { readonly limit: number; readonly windowMs: number };
  /** The daily payout cut-off (PAYOUT_CUTOFF, HH:MM in UTC): minutes after midnight UTC. */
  readonly payoutCutoffMinutesUtc: number;
  /** VAULT_KEYS: the key-encryption keys of the card vault (id and 32 bytes each); empty: a development key. */
  readonly vaultKeys: readonly KeyEncryptionKey[];
  /** VAULT_ACTIVE_KEY: the id of the KEK that wraps new data keys; the first of VAULT_KEYS when unset. */
  readonly vaultActiveKey: string | undefined;
  /** VAULT_DEV_KEY_FILE: where the development KEK is kept when VAULT_KEYS is empty (test mode only). */
  readonly vaultDevKeyFile: string;
  /** GRPC_REFLECTION: whether gRPC server reflection (v1, v1alpha) is served; on unless NODE_ENV is production. */
  readonly grpcReflection: boolean;
  /** Prometheus metrics (docs/operations.md). */
  readonly metrics: MetricsConfig;
  /**
   * SHUTDOWN_GRACE_MS: how long a process takes at most to stop on SIGINT or SIGTERM (docs/operations.md#stopping).
   * Work in hand has all of it but the last second (a quarter of a shorter grace), which is kept to abort what is left.
   */
  readonly shutdownGraceMs: number;
}

/** A Config whose Postgres has been chosen: DATABASE_URL's, or the embedded one's URL (src/composition/dependencies.ts). */
export type ConnectedConfig = Config & { readonly databaseUrl: string };

/** Where the embedded Postgres keeps its cluster, and whom it runs as under root. */
export interface EmbeddedPostgresConfig {
  /** EMBEDDED_POSTGRES_DIR: its directory (data, password, log, lock), absolute; `.checkout/postgres` by default. */
  readonly dir: string;
  /** EMBEDDED_POSTGRES_USER: the system user it runs as when started by root (Postgres refuses root); created if missing. */
  readonly systemUser: string;
}

/** Where and to whom the Prometheus metrics are served. */
export interface MetricsConfig {
  /** METRICS: whether metrics are kept and served at all (on by default). */
  readonly enabled: boolean;
  /** METRICS_TOKEN: a bearer token that opens /metrics to clients that are not on this machine (at least 16 characters). */
  readonly token: string | undefined;
  /** METRICS_PORT: a listener of its own serving only /metrics (worker processes have no other); none when undefined. */
  readonly port: number | undefined;
  /** METRICS_HOST: the interface METRICS_PORT binds to; loopback by default. */
  readonly host: string;
}

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

/**
 * The documented defaults of {@link ConnectionLimits}. The gateway takes its own options (gateway/options.ts, the
 * same shape and defaults; test/gateway-options.test.ts holds them equal), which server/service.ts fills from here.
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 10_000,
};

/** Which proxies may name the client: none, the nearest N hops, or those at these addresses and CIDR networks. */
export type TrustProxy = false | number | readonly string[];

/** A configuration value that cannot be used; the message says which and why. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * Reads and validates the configuration.
 * @throws ConfigError naming the variable at fault.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const publicUrl = url(env, 'PUBLIC_URL', `http://localhost:${port}`);
  const config: Config = {
    databaseUrl: env.DATABASE_URL?.trim() ? url(env, 'DATABASE_URL', '', ['postgres:', 'postgresql:']) : undefined,
    embeddedPostgres: {
      dir: path.resolve(env.EMBEDDED_POSTGRES_DIR?.trim() || '.checkout/postgres'),
      systemUser: name(env, 'EMBEDDED_POSTGRES_USER', 'checkout-pg', /^[a-z_][a-z0-9_-]{0,31}$/),
    },
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 20, 2, 500),
    databaseNamedStatements: bool(env, 'DATABASE_NAMED_STATEMENTS', true),
    natsUrl: natsUrl(env),
    natsStreamReplicas: integer(env, 'NATS_STREAM_REPLICAS', 1, 1, 5),
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    publicUrl,
    checkoutUrl: url(env, 'CHECKOUT_URL', publicUrl),
    natsStream: name(env, 'NATS_STREAM', 'CHECKOUT_EVENTS', /^[A-Za-z0-9_-]{1,64}$/),
    natsSubjectPrefix: name(env, 'NATS_SUBJECT_PREFIX', 'checkout.events', /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/),
    logLevel: name(env, 'LOG_LEVEL', 'info', /^[a-z]+$/, LOG_LEVELS),
    runDispatcher: bool(env, 'RUN_DISPATCHER', true),
    serveWorkers: serveWorkers(env),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookRetryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 30_000, 10, 3_600_000),
    webhookRetryCapMs: integer(env, 'WEBHOOK_RETRY_CAP_MS', 6 * 3_600_000, 10, 24 * 3_600_000),
    webhookLeaseMs: integer(env, 'WEBHOOK_LEASE_MS', 40_000, 200, 600_000),
    webhookConcurrency: {
      total: integer(env, 'WEBHOOK_CONCURRENCY', 128, 1, 10_000),
      perEndpoint: integer(env, 'WEBHOOK_CONCURRENCY_PER_ENDPOINT', 8, 1, 10_000),
      perMerchant: integer(env, 'WEBHOOK_CONCURRENCY_PER_MERCHANT', 32, 1, 10_000),
    },
    connectionLimits: {
      headersTimeoutMs: integer(env, 'HTTP_HEADERS_TIMEOUT_MS', DEFAULT_CONNECTION_LIMITS.headersTimeoutMs, 100, 600_000),
      requestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS', DEFAULT_CONNECTION_LIMITS.requestTimeoutMs, 100, 3_600_000),
      keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', DEFAULT_CONNECTION_LIMITS.keepAliveTimeoutMs, 100, 600_000),
      maxConnections: integer(env, 'MAX_CONNECTIONS', DEFAULT_CONNECTION_LIMITS.maxConnections, 1, 1_000_000),
    },
    webhookAllowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    payoutCutoffMinutesUtc: timeOfDay(env, 'PAYOUT_CUTOFF', '00:00'),
    cardVelocity: {
      windowMs: integer(env, 'CARD_VELOCITY_WINDOW_S', 600, 1, 86_400) * 1000,
      perClientAddress: integer(env, 'CARD_VELOCITY_PER_ADDRESS', 40, 0, 1_000_000),
      perMerchant: integer(env, 'CARD_VELOCITY_PER_MERCHANT', 2000, 0, 100_000_000),
      declineWeight: integer(env, 'CARD_VELOCITY_DECLINE_WEIGHT', 4, 1, 100),
    },
    trustProxy: trustProxy(env),
    vaultKeys: vaultKeys(env),
    vaultActiveKey: env.VAULT_ACTIVE_KEY?.trim() || undefined,
    vaultDevKeyFile: env.VAULT_DEV_KEY_FILE?.trim() || '.checkout/vault-dev.key',
    rateLimit: { perSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 100, 0, 1_000_000), burst: integer(env, 'RATE_LIMIT_BURST', 200, 1, 10_000_000) },
    // At most an hour: the janitor deletes counts older than that.
    authFailures: { limit: integer(env, 'AUTH_FAILURE_LIMIT', 20, 0, 1_000_000), windowMs: integer(env, 'AUTH_FAILURE_WINDOW_S', 60, 1, 3600) * 1000 },
    metrics: metricsConfig(env),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 100, 600_000),
    grpcReflection: name(env, 'GRPC_REFLECTION', env.NODE_ENV?.trim() === 'production' ? 'off' : 'on', /^(on|off)$/, new Set(['on', 'off'])) === 'on',
  };
  const webhooks = config.webhookConcurrency;
  if (webhooks.perEndpoint > webhooks.perMerchant || webhooks.perMerchant > webhooks.total) {
    throw new ConfigError(
      `Webhook concurrency must satisfy WEBHOOK_CONCURRENCY_PER_ENDPOINT (${webhooks.perEndpoint}) <= WEBHOOK_CONCURRENCY_PER_MERCHANT (${webhooks.perMerchant}) <= WEBHOOK_CONCURRENCY (${webhooks.total}).`,
    );
  }
  if (config.webhookLeaseMs <= config.webhookTimeoutMs) {
    throw new ConfigError(`WEBHOOK_LEASE_MS (${config.webhookLeaseMs}) must be longer than WEBHOOK_TIMEOUT_MS (${config.webhookTimeoutMs}).`);
  }
  if (config.vaultActiveKey !== undefined && !config.vaultKeys.some((key) => key.id === config.vaultActiveKey)) {
    throw new ConfigError(`VAULT_ACTIVE_KEY "${config.vaultActiveKey}" is not one of the ids in VAULT_KEYS.`);
  }
  const limits = config.connectionLimits;
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(`HTTP_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not be longer than HTTP_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs}).`);
  }
  return config;
}

/** METRICS, METRICS_TOKEN, METRICS_PORT, METRICS_HOST. */
function metricsConfig(env: NodeJS.ProcessEnv): MetricsConfig {
  const token = env.METRICS_TOKEN?.trim() || undefined;
  if (token !== undefined && (token.length < 16 || /\s/.test(token))) throw new ConfigError('METRICS_TOKEN must be at least 16 characters, without spaces.');
  return {
    enabled: name(env, 'METRICS', 'on', /^(on|off)$/, new Set(['on', 'off'])) === 'on',
    token,
    port: env.METRICS_PORT?.trim() ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined,
    host: env.METRICS_HOST?.trim() || '127.0.0.1',
  };
}

/** VAULT_KEYS: "id:base64,id:base64", each key 32 bytes; ids unique. Errors never repeat key material. */
function vaultKeys(env: NodeJS.ProcessEnv): KeyEncryptionKey[] {
  let keys: KeyEncryptionKey[];
  try {
    keys = parseKeyList(env.VAULT_KEYS ?? '');
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const ids = new Set(keys.map((key) => key.id));
  if (ids.size !== keys.length) throw new ConfigError('VAULT_KEYS names a key id twice.');
  return keys;
}

function integer(env: NodeJS.ProcessEnv, key: string, fallback: number, min: number, max: number): number {
  const raw = env[key]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(`${key} must be an integer from ${min} to ${max}, got "${raw}".`);
  return value;
}

function url(env: NodeJS.ProcessEnv, key: string, fallback: string, protocols = ['http:', 'https:']): string {
  const raw = env[key]?.trim() || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${key} must be an absolute URL, got "${raw}".`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${key} must use ${protocols.join(' or ')}, got "${parsed.protocol}".`);
  return raw.replace(/\/+$/, '');
}

/** How events travel: through NATS JetStream, or (no NATS_URL) through the event stream in Postgres. */
export type EventsMode = 'nats' | 'postgres-outbox';

/** The events' mode of a configuration: `nats` when NATS_URL names servers, `postgres-outbox` otherwise. */
export function eventsMode(config: Pick<Config, 'natsUrl'>): EventsMode {
  return config.natsUrl === undefined ? 'postgres-outbox' : 'nats';
}

/** NATS_URL: one server, or a comma list of a cluster's servers (nats://, tls:// or host:port each); undefined when unset or empty. */
function natsUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.NATS_URL?.trim();
  if (!raw) return undefined;
  const servers = raw.split(',').map((server) => server.trim());
  if (servers.some((server) => !/^((nats|tls|ws|wss):\/\/)?[^\s,/]+$/.test(server))) {
    throw new ConfigError(`NATS_URL must be a server URL or a comma list of them (nats://host:4222,nats://host2:4222), got "${raw}".`);
  }
  return servers.join(',');
}

/** SERVE_WORKERS: which workers `serve` runs beside the API. */
function serveWorkers(env: NodeJS.ProcessEnv): WorkerName[] {
  const raw = env.SERVE_WORKERS?.trim() || 'all';
  if (raw === 'none') return [];
  try {
    return parseWorkerNames(raw);
  } catch (err) {
    throw new ConfigError(`SERVE_WORKERS has an invalid value "${raw}": ${(err as Error).message}`);
  }
}

function bool(env: NodeJS.ProcessEnv, key: string, fallback: boolean): boolean {
  return name(env, key, String(fallback), /^(true|false)$/, new Set(['true', 'false'])) === 'true';
}

const ADDRESS_OR_NETWORK = /^(\d{1,3}(\.\d{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)(\/\d{1,3})?$/;

/** TRUST_PROXY: false, true (the nearest proxy: 1 hop), a hop count, or a comma list of proxy addresses and networks. */
function trustProxy(env: NodeJS.ProcessEnv): TrustProxy {
  const raw = env.TRUST_PROXY?.trim() || 'false';
  if (raw === 'false') return false;
  // "true" trusts the one proxy in front, never every hop: the leftmost X-Forwarded-For entry is the client's to write.
  if (raw === 'true') return 1;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  const list = raw.split(',').map((entry) => entry.trim());
  const names = new Set(['loopback', 'linklocal', 'uniquelocal']);
  if (list.every((entry) => names.has(entry) || ADDRESS_OR_NETWORK.test(entry))) return list;
  throw new ConfigError(
    `TRUST_PROXY has an invalid value "${raw}" (false; true for the one proxy in front; a number of proxy hops; or a comma list of proxy addresses and networks, e.g. "10.0.0.0/8,127.0.0.1").`,
  );
}

function name(env: NodeJS.ProcessEnv, key: string, fallback: string, pattern: RegExp, allowed?: ReadonlySet<string>): string {
  const raw = env[key]?.trim() || fallback;
  if (!pattern.test(raw) || (allowed && !allowed.has(raw))) {
    throw new ConfigError(`${key} has an invalid value "${raw}"${allowed ? ` (one of ${[...allowed].join(', ')})` : ''}.`);
  }
  return raw;
}

/** A time of day "HH:MM" (24-hour, UTC) as minutes after midnight. */
function timeOfDay(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const value = env[name] ?? fallback;
  const match = /^([01][0-9]|2[0-3]):([0-5][0-9])$/.exec(value);
  if (!match) throw new ConfigError(`${name} must be a time of day HH:MM in UTC, such as 00:00 or 17:30 (got ${JSON.stringify(value)}).`);
  return Number(match[1]) * 60 + Number(match[2]);
}
