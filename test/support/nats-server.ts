import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { connect as connectNats } from 'nats';

/** The machine's NATS (JetStream on); tests isolate themselves by stream and subject names. */
export const MACHINE_NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** Unique stream options for one test file (with an installation id of their own, for tests that run no service). */
export function uniqueStream(): { stream: string; subjectPrefix: string; duplicateWindowMs: number; installationId: string } {
  const id = randomBytes(5).toString('hex');
  return { stream: `TEST_${id}`, subjectPrefix: `test.${id}.events`, duplicateWindowMs: 120_000, installationId: `ins_test${id}` };
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A nats-server of the test's own (JetStream on, own port and store), so the machine's stays up. */
export interface OwnNatsServer {
  readonly url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  /** Stops it and deletes its store. */
  destroy(): Promise<void>;
}

/** Starts a nats-server on a free port with a temporary JetStream store. */
export async function startOwnNatsServer(binary = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server'): Promise<OwnNatsServer> {
  const port = await freePort();
  const storeDir = mkdtempSync(path.join(tmpdir(), 'checkout-nats-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    await waitForPort(port);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGTERM');
    });
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** Deletes a JetStream stream that a test's service made on the machine's NATS (it outlives the test otherwise). */
export async function deleteStream(name: string): Promise<void> {
  const nc = await connectNats({ servers: MACHINE_NATS_URL, timeout: 2000 }).catch(() => undefined);
  if (!nc) return;
  const jsm = await nc.jetstreamManager().catch(() => undefined);
  await jsm?.streams.delete(name).catch(() => undefined);
  await nc.close();
}
