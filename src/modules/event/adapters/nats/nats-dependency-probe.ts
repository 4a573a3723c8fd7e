import type { NatsConnection } from 'nats';
import type { DependencyProbe } from '../../../../kernel/ports/dependency-probe.port.ts';

/** Probes NATS with a PING round trip on the service's connection, if it has one yet. */
export class NatsDependencyProbe implements DependencyProbe {
  readonly name = 'nats';
  readonly #connection: () => NatsConnection | undefined;

  /** `connection` answers the current connection, or undefined while the first connect is still being tried. */
  constructor(connection: () => NatsConnection | undefined) {
    this.#connection = connection;
  }

  async probe(): Promise<void> {
    const nc = this.#connection();
    if (!nc) throw new Error('not connected yet');
    if (nc.isClosed()) throw new Error('connection closed');
    await nc.flush();
  }
}
