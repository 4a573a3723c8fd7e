// A command started by npx (`npx checkout listen`) runs under `sh -c`, a child of npm: a SIGTERM to
// npx kills that shell, which does not pass the signal on, and the command would run on with no parent.

/** How often the parent process id is looked at. */
const POLL_MS = 250;

/**
 * Calls `onGone` once the npx (`npm exec`) that started this process has
 * exited, told by this process's parent id changing (it is handed to init or
 * a subreaper). Does nothing for a process not started by npx: one started
 * by `nohup`, `setsid` or a supervisor may outlive its parent on purpose.
 * Answers a function that stops watching.
 */
export function whenNpxExits(onGone: () => void, env: Readonly<Record<string, string | undefined>> = process.env): () => void {
  if (env.npm_command !== 'exec') return () => undefined;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, POLL_MS);
  // Watching never keeps the process alive by itself.
  timer.unref();
  return () => clearInterval(timer);
}
