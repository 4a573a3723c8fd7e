import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from './wait.ts';

/** A long-running process whose output is kept, to wait for lines in. */
export class Background {
  output = '';
  readonly child: ChildProcess;

  /** `started`, when given, is told of the process, so that a suite can stop whatever a failed test left running. */
  constructor(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, started?: Set<Background>) {
    this.child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    started?.add(this);
    this.child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
  }

  /** The first match of `pattern` in the output, once it is there. */
  async waitFor(what: string, pattern: RegExp, timeoutMs = 120_000): Promise<RegExpMatchArray> {
    const ended = () => this.child.exitCode !== null || this.child.signalCode !== null;
    let match: RegExpMatchArray | null;
    try {
      match = await waitFor(what, () => this.output.match(pattern), (m) => m !== null || ended(), timeoutMs, 100);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nOutput:\n${this.output}`, { cause: err });
    }
    if (!match) throw new Error(`${what}: the process ended first (${this.child.exitCode ?? this.child.signalCode}). Output:\n${this.output}`);
    return match;
  }

  /** Sends SIGTERM (SIGKILL 20 s later); answers the exit code, or the signal that ended it. */
  async stop(): Promise<number | NodeJS.Signals> {
    const ended = () => this.child.exitCode ?? this.child.signalCode;
    if (ended() !== null) return ended()!;
    const exited = new Promise<number | NodeJS.Signals>((resolve) => this.child.once('exit', (code, signal) => resolve(code ?? signal!)));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    const result = await exited;
    clearTimeout(timer);
    return result;
  }
}
