/** Where the composition root and the workers report: a line, and the error behind it if any. */
export interface Log {
  info(line: string): void;
  warn(line: string, err?: unknown): void;
  error(line: string, err?: unknown): void;
}

/** A Log over a pino-style logger (the gateway's). */
export function pinoLog(logger: { info(msg: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void }): Log {
  return {
    info: (line) => logger.info(line),
    warn: (line, err) => logger.warn(err === undefined ? {} : { err }, line),
    error: (line, err) => logger.error(err === undefined ? {} : { err }, line),
  };
}

/** A Log writing plain lines (the worker processes): `line: cause` when there is an error. */
export function lineLog(write: (line: string) => void): Log {
  const withCause = (line: string, err?: unknown) => write(err === undefined ? line : `${line}: ${(err as Error)?.message ?? String(err)}`);
  return { info: write, warn: withCause, error: withCause };
}
