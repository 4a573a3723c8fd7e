import type { Clock } from '../ports/clock.port.ts';
import type { DependencyProbe } from '../ports/dependency-probe.port.ts';

/** The outcome of one readiness check. */
export interface Readiness {
  /** True when every required dependency answered. */
  readonly ready: boolean;
  /** Each dependency by name: "ok", or "unavailable" with the reason; with the way it is used when its probe says (`mode`). */
  readonly checks: Readonly<Record<string, { readonly status: 'ok' | 'unavailable'; readonly required: boolean; readonly reason?: string; readonly mode?: string }>>;
}

/** Answers whether the service can do its work now. */
export type CheckReadiness = () => Promise<Readiness>;

/** Options of {@link createCheckReadiness}. */
export interface CheckReadinessOptions {
  /** Dependencies without which the service cannot serve: one that fails makes it unready. */
  readonly required: readonly DependencyProbe[];
  /** Dependencies reported for information only (NATS, the events: orders are accepted while they are down). */
  readonly informational: readonly DependencyProbe[];
  readonly clock: Clock;
  /** How long one probe may take before it counts as unavailable. */
  readonly timeoutMs: number;
  /** How long an answer is reused, so that many callers cost one probe per dependency. */
  readonly cacheMs: number;
}

/**
 * Creates the readiness check. Probes run at most once per `cacheMs`;
 * callers that arrive while a check runs share it, so a flood of probes
 * (load balancers, a retry loop) never piles up connections to a dependency.
 */
export function createCheckReadiness(options: CheckReadinessOptions): CheckReadiness {
  let last: { at: number; readiness: Readiness } | undefined;
  let running: Promise<Readiness> | undefined;

  const probeOne = async (probe: DependencyProbe, required: boolean) => {
    const mode = probe.mode === undefined ? {} : { mode: probe.mode };
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        probe.probe(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
        }),
      ]);
      return [probe.name, { ...mode, status: 'ok' as const, required }] as const;
    } catch (err) {
      return [probe.name, { ...mode, status: 'unavailable' as const, required, reason: err instanceof Error ? err.message : String(err) }] as const;
    } finally {
      clearTimeout(timer);
    }
  };

  const check = async (): Promise<Readiness> => {
    const results = await Promise.all([
      ...options.required.map((probe) => probeOne(probe, true)),
      ...options.informational.map((probe) => probeOne(probe, false)),
    ]);
    const ready = results.every(([, result]) => !result.required || result.status === 'ok');
    return { ready, checks: Object.fromEntries(results) };
  };

  return () => {
    const now = options.clock.now().getTime();
    if (last && now - last.at < options.cacheMs) return Promise.resolve(last.readiness);
    running ??= check()
      .then((readiness) => {
        last = { at: options.clock.now().getTime(), readiness };
        return readiness;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
