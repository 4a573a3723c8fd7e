import type { Log } from './log.ts';

/** How a stop ended: everything finished within the grace, or the grace ran out and what was left was abandoned. */
export type StopOutcome = 'clean' | 'abandoned';

/** One part of a process to stop (the listener, a worker, the NATS connection, the Postgres pool). */
export interface StopStep {
  /** How the log names it when it is still running at the end of the grace. */
  readonly name: string;
  /** Finishes the work in hand and closes; once `abandon` fires, aborts what it still waits for and stops waiting. */
  stop(abandon: AbortSignal): Promise<unknown>;
}

/** The end of the grace kept to abort what is left and close the connections: 1 s, or a quarter of a shorter grace. */
export function abortReserveMs(graceMs: number): number {
  return Math.min(1000, Math.floor(graceMs / 4));
}

/**
 * Stops a process's parts within `graceMs`: the stages one after another, the
 * steps of a stage together. Work in hand may run until the reserve before the
 * end of the grace ({@link abortReserveMs}); then every step still running is
 * told to abandon what it waits for, and the log names them. Resolves 'clean'
 * when every step finished before that, else 'abandoned', at the latest when
 * the grace ends: a step still running then (a query on a Postgres that hangs)
 * is left behind, for the caller to exit over it.
 */
export async function stopWithinGrace(graceMs: number, stages: readonly (readonly StopStep[])[], log: Pick<Log, 'warn' | 'error'>): Promise<StopOutcome> {
  const abandon = new AbortController();
  const pending = new Set<string>();
  const abandonTimer = setTimeout(() => {
    log.warn(`Shutdown grace nearly spent (SHUTDOWN_GRACE_MS=${graceMs}): aborting what is still in hand: ${[...pending].join(', ') || 'nothing'}`);
    abandon.abort();
  }, graceMs - abortReserveMs(graceMs));
  let endTimer: NodeJS.Timeout | undefined;
  const end = new Promise<'late'>((resolve) => (endTimer = setTimeout(() => resolve('late'), graceMs)));
  const run = (async () => {
    for (const stage of stages) {
      await Promise.all(
        stage.map(async (step) => {
          pending.add(step.name);
          try {
            await step.stop(abandon.signal);
          } catch (err) {
            log.warn(`Shutdown: stopping ${step.name} failed`, err);
          } finally {
            pending.delete(step.name);
          }
        }),
      );
    }
    return 'done' as const;
  })();
  try {
    if ((await Promise.race([run, end])) === 'late') {
      log.error(`Shutdown grace over (SHUTDOWN_GRACE_MS=${graceMs}); left unfinished: ${[...pending].join(', ')}`);
      return 'abandoned';
    }
    return abandon.signal.aborted ? 'abandoned' : 'clean';
  } finally {
    clearTimeout(abandonTimer);
    clearTimeout(endTimer);
  }
}

/** Resolves once the signal fires (at once if it has). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Waits for `work`, or stops waiting once `abandon` fires; a rejection of `work` is not raised. */
export async function unlessAbandoned(work: Promise<unknown> | undefined, abandon: AbortSignal): Promise<void> {
  if (!work) return;
  await Promise.race([work.catch(() => undefined), whenAborted(abandon)]);
}
