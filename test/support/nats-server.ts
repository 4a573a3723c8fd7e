import type { JetStreamManager } from 'nats';
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
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
  /** The HTTP monitoring address (/connz, /jsz), when started with one. */
  readonly monitorUrl: string | undefined;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  /** Stops it and deletes its store. */
  destroy(): Promise<void>;
}

/** The nats-server binary: NATS_SERVER_BIN, else Debian's /usr/sbin/nats-server, else the first on PATH; undefined when none is there. */
export function findNatsServer(): string | undefined {
  const candidates = process.env.NATS_SERVER_BIN ? [process.env.NATS_SERVER_BIN] : ['/usr/sbin/nats-server', ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, 'nats-server'))];
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The nats-server that suites starting servers of their own run (they require 'nats-server': see requirements.ts). */
export const NATS_SERVER_BIN = findNatsServer() ?? process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

/** Starts a nats-server on a free port with a temporary JetStream store (and an HTTP monitoring port when asked). */
export async function startOwnNatsServer(binary = NATS_SERVER_BIN, options: { monitor?: boolean } = {}): Promise<OwnNatsServer> {
  const port = await freePort();
  const monitorPort = options.monitor ? await freePort() : undefined;
  const storeDir = mkdtempSync(path.join(tmpdir(), 'checkout-nats-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    const monitor = monitorPort ? ['-m', String(monitorPort)] : [];
    child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, ...monitor], { stdio: 'ignore' });
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
    monitorUrl: monitorPort ? `http://127.0.0.1:${monitorPort}` : undefined,
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

/** One server of an {@link OwnNatsCluster}. */
export interface ClusterNode {
  /** Its server name (what JetStream names as a stream's leader). */
  readonly name: string;
  readonly url: string;
  /** Kills it (SIGKILL: no goodbye to the cluster) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and store. */
  start(): Promise<void>;
  readonly running: boolean;
}

/** A JetStream cluster of the test's own: every server, its client port and its route, on 127.0.0.1. */
export interface OwnNatsCluster {
  readonly nodes: readonly ClusterNode[];
  /** Every server's URL, comma-separated (what NATS_URL takes). */
  readonly url: string;
  /** Kills every server and deletes their stores. */
  destroy(): Promise<void>;
}

/** Starts a JetStream cluster of `size` nats-servers on loopback ports, each with a store of its own; resolves once JetStream has a meta leader. */
export async function startOwnNatsCluster(size = 3, binary = NATS_SERVER_BIN): Promise<OwnNatsCluster> {
  const id = randomBytes(3).toString('hex');
  const root = mkdtempSync(path.join(tmpdir(), 'checkout-nats-cluster-'));
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort() })));
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`).join(',');
  const nodes = ports.map((p, i): ClusterNode => {
    const name = `n${i + 1}-${id}`;
    let child: ChildProcess | undefined;
    const node: ClusterNode = {
      name,
      url: `nats://127.0.0.1:${p.client}`,
      get running() {
        return child !== undefined && child.exitCode === null && child.signalCode === null;
      },
      async start() {
        const args = ['-a', '127.0.0.1', '-p', String(p.client), '-n', name, '-js', '-sd', path.join(root, name), '--cluster_name', `checkout-${id}`, '--cluster', `nats://127.0.0.1:${p.route}`, '--routes', routes];
        child = spawn(binary, args, { stdio: 'ignore' });
        await waitForPort(p.client);
      },
      async kill() {
        const running = child;
        child = undefined;
        if (!running || running.exitCode !== null || running.signalCode !== null) return;
        await new Promise<void>((resolve) => {
          running.once('exit', () => resolve());
          running.kill('SIGKILL');
        });
      },
    };
    return node;
  });
  const cluster: OwnNatsCluster = {
    nodes,
    url: nodes.map((n) => n.url).join(','),
    async destroy() {
      await Promise.all(nodes.map((n) => n.kill()));
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    // JetStream answers account info once the servers have met and elected a meta leader.
    const nc = await connectNats({ servers: nodes.map((n) => n.url) });
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const ok = await nc
          .jetstreamManager({ timeout: 2000 })
          .then((jsm) => jsm.getAccountInfo())
          .then(() => true, () => false);
        if (ok) break;
        if (Date.now() > deadline) throw new Error('the NATS cluster elected no JetStream meta leader within 60 s');
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await nc.close();
    }
  } catch (err) {
    await cluster.destroy();
    throw err;
  }
  return cluster;
}

/** A stream's message count and every message's Nats-Msg-Id (the event id), read 50 at a time. */
export async function readStream(jsm: JetStreamManager, name: string): Promise<{ messages: number; msgIds: string[] }> {
  const { state } = await jsm.streams.info(name);
  const msgIds: string[] = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq += 50) {
    const chunk = await Promise.all(
      Array.from({ length: Math.min(50, state.last_seq - seq + 1) }, (_, i) => jsm.streams.getMessage(name, { seq: seq + i }).then((m) => m.header?.get('Nats-Msg-Id') ?? '')),
    );
    msgIds.push(...chunk);
  }
  return { messages: state.messages, msgIds };
}
