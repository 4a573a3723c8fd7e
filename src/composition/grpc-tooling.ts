import type { DescService } from '@bufbuild/protobuf';
import type { ConnectRouter } from '@connectrpc/connect';
import { Health } from '../gen/grpc/health/v1/health_pb.ts';
import { ServerReflection as ServerReflectionV1 } from '../gen/grpc/reflection/v1/reflection_pb.ts';
import { ServerReflection as ServerReflectionV1alpha } from '../gen/grpc/reflection/v1alpha/reflection_pb.ts';
import { EventService } from '../gen/checkout/v1/webhook_pb.ts';
import type { CheckReadiness } from '../kernel/application/check-readiness.ts';
import { createHealthService } from '../kernel/application/health-service.ts';
import { createServerReflection } from '../kernel/application/server-reflection.ts';

/** How often a Watch of the health service asks the readiness check again. */
export const HEALTH_WATCH_POLL_MS = 3000;

/**
 * Checks a service needs beyond the required ones (Postgres, migrations):
 * EventService streams events (ListenEvents) from their transport, so it is
 * NOT_SERVING while the `events` check fails (NATS down, when events travel
 * through it); every other service works on Postgres alone (events wait in
 * the outbox).
 */
const EXTRA_CHECKS: Readonly<Record<string, readonly string[]>> = { [EventService.typeName]: ['events'] };

/** Options of {@link withGrpcTooling}. */
export interface GrpcToolingOptions {
  readonly readiness: CheckReadiness;
  /** Whether server reflection (v1 and v1alpha) is served (GRPC_REFLECTION). */
  readonly reflection: boolean;
  /** How often Watch polls; {@link HEALTH_WATCH_POLL_MS} when absent. */
  readonly watchPollMs?: number;
}

/**
 * The core's routes plus the gRPC tooling: `grpc.health.v1.Health`, with a
 * status for every service the routes register, and, when switched on,
 * gRPC server reflection over the same services' descriptors.
 */
export function withGrpcTooling(routes: (router: ConnectRouter) => void, options: GrpcToolingOptions): (router: ConnectRouter) => void {
  return (router) => {
    routes(router);
    const served = new Map<string, DescService>(router.handlers.map((handler) => [handler.service.typeName, handler.service]));
    served.set(Health.typeName, Health);
    if (options.reflection) {
      served.set(ServerReflectionV1.typeName, ServerReflectionV1);
      served.set(ServerReflectionV1alpha.typeName, ServerReflectionV1alpha);
    }
    const services = Object.fromEntries([...served.keys()].map((name) => [name, EXTRA_CHECKS[name] ?? []]));
    router.service(Health, createHealthService({ readiness: options.readiness, services, pollMs: options.watchPollMs ?? HEALTH_WATCH_POLL_MS }));
    if (options.reflection) {
      const reflection = createServerReflection([...served.values()]);
      router.service(ServerReflectionV1, reflection.v1);
      router.service(ServerReflectionV1alpha, reflection.v1alpha);
    }
  };
}
