// The load of bench/orders.ts and bench/floor.ts: keep-alive clients posting orders to POST /v1/orders
// over raw sockets with pre-built requests (the generator shares the CPUs with the server), closed
// loop or open loop, and the memory of the process under test.
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { orderBody } from '../test/support/order-fixtures.ts';

/** Peak (VmHWM) and current (VmRSS) resident set of a process, in bytes. */
export async function memoryOf(pid: number): Promise<{ hwm: number; rss: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
}

export interface LoadResult {
  ok: number;
  errors: number;
  /** Latencies of successful requests, ms. */
  latencies: Float64Array;
  elapsedS: number;
  /** A few error descriptions, for the report. */
  samples: string[];
}

const CRLF2 = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

/** One keep-alive HTTP/1.1 connection that sends one request at a time and parses the answers. */
export interface Connection {
  /** Sends a request; `onAnswer` gets its status and the start of its body, or an error description. */
  send(request: Buffer, onAnswer: (status: number, excerpt: string) => void): void;
  readonly busy: boolean;
  destroy(): void;
}

/** Opens a connection that reconnects (after 10 ms) when the server closes it; a request in flight then fails. */
export function openConnection(port: number, onError: (what: string) => void): Connection {
  let socket: net.Socket;
  let buffer: Buffer = Buffer.alloc(0);
  let pending: ((status: number, excerpt: string) => void) | undefined;
  let queued: Buffer | undefined;
  let connected = false;
  let destroyed = false;

  const connect = () => {
    buffer = Buffer.alloc(0);
    connected = false;
    socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
    socket.on('connect', () => {
      connected = true;
      if (queued) socket.write(queued);
      queued = undefined;
    });
    socket.on('data', onData);
    // 'close' always follows 'error': the request in flight fails once, there, and the connection comes back.
    let lastError = '';
    socket.on('error', (err) => (lastError = err.message));
    socket.on('close', () => {
      connected = false;
      if (destroyed) return;
      setTimeout(connect, 10);
      if (queued) return; // not sent yet: it goes out on the new connection
      const failed = pending;
      pending = undefined;
      if (failed) onError(lastError ? `socket: ${lastError}` : 'socket closed mid-request');
    });
  };
  const onData = (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      const headerEnd = buffer.indexOf(CRLF2);
      if (headerEnd < 0) return;
      const headers = buffer.toString('latin1', 0, headerEnd);
      let total: number;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(headers);
      if (length) {
        total = headerEnd + 4 + Number(length[1]);
        if (buffer.length < total) return;
      } else if (/\r\ntransfer-encoding:\s*chunked/i.test(headers)) {
        const end = buffer.indexOf(CHUNKED_END, headerEnd + 2);
        if (end < 0) return;
        total = end + CHUNKED_END.length;
      } else {
        total = headerEnd + 4;
      }
      const status = Number(headers.slice(9, 12));
      const excerpt = status === 201 ? '' : buffer.toString('utf8', headerEnd + 4, Math.min(total, headerEnd + 304));
      buffer = buffer.subarray(total);
      const answer = pending;
      pending = undefined;
      if (/\r\nconnection:\s*close/i.test(headers)) {
        connected = false;
        socket.destroy();
      }
      answer?.(status, excerpt);
    }
  };
  connect();
  return {
    send(request, onAnswer) {
      pending = onAnswer;
      if (connected) socket.write(request);
      else queued = request;
    },
    get busy() {
      return pending !== undefined;
    },
    destroy() {
      destroyed = true;
      socket.destroy();
    },
  };
}

/** Builds the requests of one phase: each with a fresh Idempotency-Key. */
export function requestMaker(port: number, apiKey: string, keyPrefix: string): () => Buffer {
  const body = Buffer.from(JSON.stringify(orderBody()));
  const head =
    `POST /v1/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nIdempotency-Key: `;
  let counter = 0;
  return () => Buffer.concat([Buffer.from(`${head}${keyPrefix}${(counter++).toString(36)}\r\n\r\n`, 'latin1'), body]);
}

/** Latencies and errors of a phase. */
export function resultRecorder() {
  let latencies = new Float64Array(1 << 16);
  let ok = 0;
  let errors = 0;
  const samples: string[] = [];
  return {
    error(what: string) {
      errors += 1;
      if (samples.length < 5) samples.push(what);
    },
    answer(status: number, excerpt: string, ms: number) {
      if (status !== 201) return this.error(`HTTP ${status}: ${excerpt}`);
      if (ok === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[ok++] = ms;
    },
    result(elapsedS: number): LoadResult {
      return { ok, errors, latencies: latencies.subarray(0, ok), elapsedS, samples };
    },
  };
}

/**
 * Runs `concurrency` closed-loop clients for `seconds`, each on one keep-alive
 * socket, each request with a fresh Idempotency-Key.
 */
export async function runLoad(opts: { port: number; apiKey: string; concurrency: number; seconds: number; keyPrefix: string }): Promise<LoadResult> {
  const request = requestMaker(opts.port, opts.apiKey, opts.keyPrefix);
  const recorder = resultRecorder();
  const started = performance.now();
  const endAt = started + opts.seconds * 1000;
  const client = () =>
    new Promise<void>((resolve) => {
      const connection = openConnection(opts.port, (what) => {
        recorder.error(what);
        next();
      });
      const next = () => {
        if (performance.now() >= endAt) {
          connection.destroy();
          return resolve();
        }
        const sentAt = performance.now();
        connection.send(request(), (status, excerpt) => {
          recorder.answer(status, excerpt, performance.now() - sentAt);
          next();
        });
      };
      next();
    });
  await Promise.all(Array.from({ length: opts.concurrency }, client));
  return recorder.result((performance.now() - started) / 1000);
}

/**
 * An open-loop run: requests leave at a fixed rate whatever the answers, each
 * on an idle keep-alive connection (a new one is opened when all are busy, up
 * to 512). Latency counts from the moment a request was due, so a server that
 * falls behind is charged for the wait (no coordinated omission).
 */
export async function runOpenLoop(opts: { port: number; apiKey: string; rate: number; seconds: number; keyPrefix: string }): Promise<LoadResult & { behind: number }> {
  const request = requestMaker(opts.port, opts.apiKey, opts.keyPrefix);
  const recorder = resultRecorder();
  const connections: Connection[] = [];
  const idle: Connection[] = [];
  let outstanding = 0;
  let behind = 0;
  const started = performance.now();
  const total = Math.round(opts.rate * opts.seconds);
  let sent = 0;
  const fire = (dueAt: number) => {
    let connection = idle.pop();
    if (!connection) {
      if (connections.length >= 512) {
        behind += 1;
        recorder.error('no free connection (512 busy)');
        return;
      }
      connection = openConnection(opts.port, (what) => {
        outstanding -= 1;
        recorder.error(what);
        idle.push(connection!);
      });
      connections.push(connection);
    }
    outstanding += 1;
    const used = connection;
    used.send(request(), (status, excerpt) => {
      outstanding -= 1;
      recorder.answer(status, excerpt, performance.now() - dueAt);
      idle.push(used);
    });
  };
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - started) / 1000) * opts.rate));
      while (sent < due) fire(started + (sent++ * 1000) / opts.rate);
      if (sent >= total) return resolve();
      setTimeout(tick, 1);
    };
    tick();
  });
  const drainUntil = performance.now() + 30_000;
  while (outstanding > 0 && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 5));
  for (const c of connections) c.destroy();
  return { ...recorder.result((performance.now() - started) / 1000), behind };
}

