/** Asks one dependency of the service (a database, a broker) whether it answers now. */
export interface DependencyProbe {
  /** Short name shown in the readiness answer, e.g. "postgres". */
  readonly name: string;
  /** The way the dependency is used, shown beside its status (the events: `nats` or `postgres-outbox`). */
  readonly mode?: string;
  /**
   * Resolves when the dependency answered; rejects when it did not.
   * The caller bounds how long it waits, so a probe need not time out itself.
   */
  probe(): Promise<void>;
}
