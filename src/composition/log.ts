import pino, { type DestinationStream, type Logger } from 'pino';
import { maskCardNumbers } from '../modules/payment/domain/card.ts';

/** Fields of a log line beside its message: ids (event_id, endpoint_id, …), never card data or secrets. */
export type LogFields = Readonly<Record<string, unknown>>;

/** Where the composition root and the workers report: a line, its fields, and the error behind it if any. */
export interface Log {
  debug(line: string, fields?: LogFields): void;
  info(line: string, fields?: LogFields): void;
  warn(line: string, err?: unknown, fields?: LogFields): void;
  error(line: string, err?: unknown, fields?: LogFields): void;
  /** Whether debug lines are written: fields that cost something to build are built only then. */
  debugEnabled(): boolean;
}

/** Deepest nesting of an error's properties that is masked (and kept): a cause of a cause of a cause. */
const MASK_DEPTH = 6;

/** A serialised value with every string's card numbers masked (••••4242). */
function masked(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskCardNumbers(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MASK_DEPTH) return '[nested too deep]';
  if (Array.isArray(value)) return value.map((item) => masked(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = masked(item, depth + 1);
  return out;
}

/**
 * An error as a log line carries it (type, message, stack, code, cause…),
 * with card numbers masked wherever they appear: a message may echo what a
 * caller sent (JSON.parse quotes the body it could not read, Postgres the
 * value that broke a constraint).
 */
export function serializeError(err: unknown): unknown {
  return masked(err instanceof Error ? pino.stdSerializers.err(err) : err, 0);
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** LOG_LEVEL: fatal, error, warn, info, debug, trace or silent. */
  readonly level: string;
  /** The request being served, if any (the gateway's request scope): its id goes on every line. */
  readonly requestId?: () => string | undefined;
  /** Where lines go; standard output by default. */
  readonly destination?: DestinationStream;
  /** Fields on every line of this process (its role). */
  readonly base?: LogFields;
}

/**
 * The process's logger: one JSON object per line, with `time` (ISO 8601),
 * `level` (its name), `msg`, the process's `role`, `request_id` while a
 * request is served, and the line's own fields. Card numbers are masked in
 * messages and errors.
 */
export function createLogger(options: LoggerOptions): Logger {
  const requestId = options.requestId;
  return pino(
    {
      level: options.level,
      base: { pid: process.pid, ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      // Only called for lines that are written: nothing is spent per request at the usual levels.
      mixin: requestId
        ? () => {
            const id = requestId();
            return id === undefined ? {} : { request_id: id };
          }
        : undefined,
      hooks: {
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = maskCardNumbers(args[i] as string);
          method.apply(this, args as Parameters<typeof method>);
        },
      },
    },
    options.destination ?? pino.destination(1),
  );
}

/** A Log over a pino logger. */
export function pinoLog(logger: Logger): Log {
  const withErr = (err: unknown, fields?: LogFields) => (err === undefined ? (fields ?? {}) : { ...fields, err });
  return {
    debug: (line, fields) => logger.debug(fields ?? {}, line),
    info: (line, fields) => logger.info(fields ?? {}, line),
    warn: (line, err, fields) => logger.warn(withErr(err, fields), line),
    error: (line, err, fields) => logger.error(withErr(err, fields), line),
    debugEnabled: () => logger.isLevelEnabled('debug'),
  };
}
