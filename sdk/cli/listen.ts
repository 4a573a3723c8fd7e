// `checkout listen`: streams the caller's test events from EventService.ListenEvents and
// forwards each to a local URL, signed like a real delivery, the way `stripe listen` does.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { EventService, type ListenEventsResponse } from '../gen/checkout/v1/webhook_pb.ts';
import { SIGNATURE_HEADER, signatureHeaderValue } from '../webhooks/signature.ts';
import { whenNpxExits } from './npx-parent.ts';
import { abortAfter } from './abort-after.ts';

/** Usage text of `checkout listen`. */
export const LISTEN_USAGE = `Usage:
  checkout listen --forward-to URL [--api-key sk_test_…] [--api-base URL]
                                                   forward your test events to a local URL, signed

Options:
  --forward-to URL   where to POST each event, e.g. http://localhost:4000/webhooks
  --api-key KEY      your test secret key (default: $CHECKOUT_API_KEY); live keys are refused
  --api-base URL     the service's API base (default: $CHECKOUT_API_BASE, else $PUBLIC_URL, else
                     http://localhost:$PORT, else http://localhost:3000)`;

/** Where `runListen` writes and what it reads; the process's own by default. */
export interface ListenIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Stops the listener; by default SIGINT and SIGTERM do, and npx exiting when npx started it. */
  readonly signal?: AbortSignal;
}

const DEFAULT_API_BASE = 'http://localhost:3000';
/** A local handler that takes longer than this is reported as timed out (the event is not retried). */
const FORWARD_TIMEOUT_MS = 30_000;
const BACKOFF_INITIAL_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

/** Answers from the service that reconnecting cannot fix. */
const FATAL_CODES = new Set([Code.Unauthenticated, Code.PermissionDenied, Code.Unimplemented, Code.InvalidArgument, Code.FailedPrecondition]);

/**
 * Runs `checkout listen` with the arguments after `listen`. Resolves with the
 * exit code once stopped (0 on SIGINT/SIGTERM, the exit of the npx that
 * started it, or `io.signal`), or at once with 2 on a usage error and 1 when
 * the service refuses the key.
 */
export async function runListen(args: string[], io: Partial<ListenIo> = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;

  const usageError = (message: string): number => {
    stderr.write(`checkout listen: ${message}\n\n${LISTEN_USAGE}\n`);
    return 2;
  };
  let values: { 'forward-to'?: string; 'api-key'?: string; 'api-base'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: { 'forward-to': { type: 'string' }, 'api-key': { type: 'string' }, 'api-base': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (err) {
    return usageError((err as Error).message);
  }
  if (values.help) {
    stdout.write(`${LISTEN_USAGE}\n`);
    return 0;
  }

  const apiKey = values['api-key'] ?? env.CHECKOUT_API_KEY ?? '';
  if (apiKey === '') return usageError('needs your test secret key: pass --api-key sk_test_… or set CHECKOUT_API_KEY.');
  if (apiKey.startsWith('sk_live_')) {
    return usageError('refuses live keys: it forwards test events to your machine. Use your test secret key (sk_test_…).');
  }
  if (!apiKey.startsWith('sk_test_')) {
    return usageError(`needs a test secret key (sk_test_…); the key given starts with "${apiKey.slice(0, 8)}".`);
  }
  const forwardTo = httpUrl(values['forward-to']);
  if (!forwardTo) {
    return usageError(values['forward-to'] === undefined ? 'needs --forward-to URL, e.g. --forward-to http://localhost:4000/webhooks' : `--forward-to must be an http(s) URL; got "${values['forward-to']}".`);
  }
  // Beside a service started in the same shell, its own PUBLIC_URL or PORT says where it is.
  const apiBaseText = values['api-base'] ?? env.CHECKOUT_API_BASE ?? env.PUBLIC_URL ?? (env.PORT ? `http://localhost:${env.PORT}` : DEFAULT_API_BASE);
  const apiBase = httpUrl(apiBaseText);
  if (!apiBase) return usageError(`the API base must be an http(s) URL; got "${apiBaseText}".`);

  // Allowed (a tunnel, a VM, a container), but said: the events and a valid signature leave this machine.
  if (!isLoopbackHost(forwardTo.hostname)) {
    stderr.write(
      `checkout listen: warning: --forward-to ${forwardTo.host} is not this machine: your test events (amounts, references, customers' details), ` +
        `signed with your test endpoint's secret, will be sent there${forwardTo.protocol === 'http:' ? ' unencrypted' : ''}.\n`,
    );
  }
  if (apiBase.protocol === 'http:' && !isLoopbackHost(apiBase.hostname)) {
    stderr.write(`checkout listen: warning: the API base ${apiBase.host} is not this machine and is plain http: your secret key is sent unencrypted. Use https.\n`);
  }

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  let unwatch: () => void = () => undefined;
  if (io.signal) {
    io.signal.addEventListener('abort', onSignal, { once: true });
  } else {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    // `npx checkout listen` stopped with SIGTERM: npx's shell dies without passing the signal on.
    unwatch = whenNpxExits(onSignal, env);
  }
  try {
    return await listen({ apiKey, forwardTo: forwardTo.href, apiBase: apiBaseText, signal: stop.signal, stdout, stderr });
  } finally {
    io.signal?.removeEventListener('abort', onSignal);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    unwatch();
  }
}

interface ListenParams {
  readonly apiKey: string;
  readonly forwardTo: string;
  readonly apiBase: string;
  readonly signal: AbortSignal;
  readonly stdout: ListenIo['stdout'];
  readonly stderr: ListenIo['stderr'];
}

/** Holds the stream open, reconnecting with backoff, until the signal fires or the service refuses us. */
async function listen(params: ListenParams): Promise<number> {
  const { apiKey, forwardTo, apiBase, signal, stdout, stderr } = params;
  // Connect over the global fetch (HTTP/1.1), which Node has from 18: connect-node 2.2 needs Node 22.
  const client = createClient(EventService, createConnectTransport({ baseUrl: apiBase }));
  let secret: string | undefined;
  let failures = 0;

  while (!signal.aborted) {
    let connected = false;
    let reason: string;
    try {
      for await (const message of client.listenEvents({}, { headers: { authorization: `Bearer ${apiKey}` }, signal })) {
        if (!connected) {
          connected = true;
          failures = 0;
          if (!message.signingSecret) {
            stderr.write(`checkout listen: the service at ${apiBase} sent no signing secret, so forwarded events could not be signed. Does this merchant's test mode have a default webhook endpoint?\n`);
            return 1;
          }
          if (secret === undefined) {
            stdout.write(`Ready! Forwarding events to ${forwardTo}. Your webhook signing secret is ${message.signingSecret} (^C to quit)\n`);
          } else {
            stdout.write(`Reconnected to ${apiBase}.${message.signingSecret === secret ? '' : ` The signing secret changed; it is now ${message.signingSecret}`}\n`);
          }
        }
        if (message.signingSecret) secret = message.signingSecret;
        if (message.body !== '' && secret !== undefined) {
          stdout.write(`${await forwardEvent(message, secret, forwardTo, signal)}\n`);
        }
      }
      if (signal.aborted) break;
      reason = 'the service ended the stream';
    } catch (err) {
      if (signal.aborted) break;
      const error = ConnectError.from(err);
      if (FATAL_CODES.has(error.code)) {
        stderr.write(`checkout listen: ${refusal(error, apiBase)}\n`);
        return 1;
      }
      // resource_exhausted: too many listens of this merchant open, or this one fell too far behind; both may pass.
      reason =
        error.code === Code.ResourceExhausted ? `the service ended the stream: ${error.rawMessage}`
        : connected ? `stream dropped: ${error.rawMessage}`
        : `cannot reach ${apiBase}: ${error.rawMessage}; is the service running?`;
    }
    const delay = backoffMs(failures++);
    stderr.write(`${reason}; reconnecting in ${(delay / 1000).toFixed(1)} s…\n`);
    try {
      await sleep(delay, undefined, { signal });
    } catch {
      break;
    }
  }
  return 0;
}

/** POSTs one event's body, byte for byte, with a fresh signature, and describes the answer in one line. */
async function forwardEvent(message: ListenEventsResponse, secret: string, forwardTo: string, signal: AbortSignal): Promise<string> {
  const body = Buffer.from(message.body, 'utf8');
  const { type, id } = describeEvent(message);
  const started = performance.now();
  let answer: string;
  const deadline = abortAfter(signal, FORWARD_TIMEOUT_MS);
  try {
    const response = await fetch(forwardTo, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        [SIGNATURE_HEADER.toLowerCase()]: signatureHeaderValue(body, [secret], Math.floor(Date.now() / 1000)),
        // As a real delivery carries them, so a receiver tested with listen behaves the same in production.
        'checkout-event-id': id,
        'user-agent': 'HostedCheckout-Webhooks/1.0 (checkout listen)',
      },
      // A redirect is the local server's answer; following it would POST elsewhere.
      redirect: 'manual',
      signal: deadline.signal,
    });
    // Read the answer so the connection can be reused; its content is not shown.
    await response.arrayBuffer().catch(() => undefined);
    answer = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  } catch (err) {
    answer = `error: ${describeForwardError(err, forwardTo)}`;
  } finally {
    deadline.clear();
  }
  const ms = Math.round(performance.now() - started);
  return `${localTime(new Date())}  ${type}  ${id}  <-- ${answer} (${ms} ms)`;
}

/** The event's type and id, from the message or, failing that, from its body. */
function describeEvent(message: ListenEventsResponse): { type: string; id: string } {
  let fromBody: { type?: unknown; id?: unknown } = {};
  if (!message.type || !message.eventId) {
    try {
      fromBody = JSON.parse(message.body) as typeof fromBody;
    } catch {
      // Forwarded all the same; the receiver will say what it thinks of it.
    }
  }
  return {
    type: message.type || (typeof fromBody.type === 'string' ? fromBody.type : '(unknown type)'),
    id: message.eventId || (typeof fromBody.id === 'string' ? fromBody.id : '(unknown id)'),
  };
}

function describeForwardError(err: unknown, forwardTo: string): string {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  if (error.name === 'TimeoutError') return `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`;
  if (error.name === 'AbortError') return 'stopped';
  if (error.cause?.code === 'ECONNREFUSED') return `connection refused; is your server listening on ${new URL(forwardTo).host}?`;
  return error.cause?.message ?? error.message;
}

function refusal(error: ConnectError, apiBase: string): string {
  switch (error.code) {
    case Code.Unauthenticated:
      return `the service refused the API key: ${error.rawMessage}`;
    case Code.PermissionDenied:
      return `the service does not allow listening with this key: ${error.rawMessage}`;
    case Code.Unimplemented:
      return `the service at ${apiBase} does not offer EventService.ListenEvents; is --api-base the checkout service's API base, and is it up to date?`;
    default:
      return error.rawMessage;
  }
}

/** 1 s, 2 s, 4 s… up to 30 s, each ±20 % so that many listeners do not reconnect in step. */
function backoffMs(failures: number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** Math.min(failures, 10));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** localhost (and *.localhost), 127.0.0.0/8 and ::1, as a URL's hostname writes them. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]' || host === '[::ffff:7f00:1]';
}

function httpUrl(text: string | undefined): URL | undefined {
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** "2025-06-01 14:03:07" in the machine's time zone: the listener runs on a developer's machine. */
function localTime(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
