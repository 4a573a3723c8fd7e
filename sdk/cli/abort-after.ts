// A signal that aborts when another does or after a time, whichever comes first, and lets go of the
// other signal once done: AbortSignal.any and AbortSignal.timeout would do it from Node 20.3, but
// `checkout listen` ships in @hosted-checkout/node, which runs on Node 18.

/** A signal for one call, and how to release it when the call is over. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Stops the timer and unhooks from the outer signal; call it once the call is done. */
  clear(): void;
}

/**
 * Aborts with the outer signal's reason when it aborts, or with a `TimeoutError` after `ms`.
 */
export function abortAfter(outer: AbortSignal, ms: number): Deadline {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer.reason);
  const timer = setTimeout(() => controller.abort(new DOMException(`No answer within ${ms} ms.`, 'TimeoutError')), ms);
  if (outer.aborted) onAbort();
  else outer.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      outer.removeEventListener('abort', onAbort);
    },
  };
}
