import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { HealthCheckResponse_ServingStatus as ServingStatus, HealthCheckResponseSchema, type Health } from '../../gen/grpc/health/v1/health_pb.ts';
import type { CheckReadiness, Readiness } from './check-readiness.ts';

/** Options of {@link createHealthService}. */
export interface HealthServiceOptions {
  /** The readiness check behind every status (its required checks decide the server's, "" in the protocol). */
  readonly readiness: CheckReadiness;
  /**
   * Every service served, by fully qualified name, with the checks it needs
   * beyond the required ones (e.g. `["nats"]` for a service that streams
   * from NATS). A name not here is unknown.
   */
  readonly services: Readonly<Record<string, readonly string[]>>;
  /** How often Watch asks the readiness check again. */
  readonly pollMs: number;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/**
 * Creates gRPC's health service (`grpc.health.v1.Health`) over the readiness
 * check: the server ("") is SERVING while every required check passes
 * (Postgres answers, migrations applied), a service while those and its own
 * extra checks pass; NOT_SERVING otherwise. Check answers NOT_FOUND for a
 * name it does not know; Watch sends the status now, then each change (it
 * asks the readiness check every `pollMs`), until the client goes away, and
 * SERVICE_UNKNOWN for an unknown name, keeping the call open as the
 * protocol asks.
 */
export function createHealthService(options: HealthServiceOptions): ServiceImpl<typeof Health> {
  const known = (service: string) => service === '' || Object.hasOwn(options.services, service);
  const statusIn = (readiness: Readiness, service: string): ServingStatus => {
    const extra = service === '' ? [] : (options.services[service] ?? []);
    const serving = readiness.ready && extra.every((name) => readiness.checks[name]?.status === 'ok');
    return serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };
  const unknown = (service: string) => new ConnectError(`Unknown service "${service}": ask for "" (the server) or one of the services it serves.`, Code.NotFound);

  return {
    async check(req) {
      if (!known(req.service)) throw unknown(req.service);
      return create(HealthCheckResponseSchema, { status: statusIn(await options.readiness(), req.service) });
    },
    async list() {
      const readiness = await options.readiness();
      const names = ['', ...Object.keys(options.services)];
      return { statuses: Object.fromEntries(names.map((name) => [name, create(HealthCheckResponseSchema, { status: statusIn(readiness, name) })])) };
    },
    async *watch(req, ctx) {
      if (!known(req.service)) {
        // The services served do not change while the process runs: the answer stays SERVICE_UNKNOWN until the client leaves.
        yield create(HealthCheckResponseSchema, { status: ServingStatus.SERVICE_UNKNOWN });
        // The longest timer Node allows, again until the client leaves.
        while (!ctx.signal.aborted) await pause(2 ** 31 - 1, ctx.signal);
        return;
      }
      let last: ServingStatus | undefined;
      while (!ctx.signal.aborted) {
        const status = statusIn(await options.readiness(), req.service);
        if (status !== last) {
          last = status;
          yield create(HealthCheckResponseSchema, { status });
        }
        await pause(options.pollMs, ctx.signal);
      }
    },
  };
}
