// Polling helpers shared by the integration tests.

/** Polls probe until accept(value) holds; fails with the last value after timeoutMs. */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await probe();
      if (accept(last)) return last;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const shown = JSON.stringify(last)?.slice(0, 500);
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}; last value: ${shown}`, { cause: lastError });
    }
    await sleep(everyMs);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
