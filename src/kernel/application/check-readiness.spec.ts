import { describe, expect, it } from 'vitest';
import type { Clock } from '../ports/clock.port.ts';
import type { DependencyProbe } from '../ports/dependency-probe.port.ts';
import { createCheckReadiness } from './check-readiness.ts';

/** A dependency whose answers the test decides, one call at a time. */
class ScriptedProbe implements DependencyProbe {
  calls = 0;
  #pending: { resolve: () => void; reject: (err: Error) => void }[] = [];
  readonly name: string;
  readonly mode: string | undefined;
  constructor(name: string, mode?: string) {
    this.name = name;
    this.mode = mode;
  }
  probe(): Promise<void> {
    this.calls += 1;
    return new Promise((resolve, reject) => this.#pending.push({ resolve, reject }));
  }
  answer(): void {
    for (const p of this.#pending.splice(0)) p.resolve();
  }
  fail(message: string): void {
    for (const p of this.#pending.splice(0)) p.reject(new Error(message));
  }
}

const manualClock = () => {
  let now = Date.UTC(2026, 0, 1);
  const clock: Clock = { now: () => new Date(now) };
  return { clock, advance: (ms: number) => (now += ms) };
};

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('createCheckReadiness', () => {
  it('is ready when every required probe answers, whatever the informational ones say', async () => {
    const postgres = new ScriptedProbe('postgres');
    const nats = new ScriptedProbe('nats');
    const { clock } = manualClock();
    const check = createCheckReadiness({ required: [postgres], informational: [nats], clock, timeoutMs: 1000, cacheMs: 1000 });
    const result = check();
    await tick();
    postgres.answer();
    nats.fail('not connected yet');
    expect(await result).toEqual({
      ready: true,
      checks: { postgres: { status: 'ok', required: true }, nats: { status: 'unavailable', required: false, reason: 'not connected yet' } },
    });
  });

  it('shows the mode a probe names beside its status, answered or not', async () => {
    const postgres = new ScriptedProbe('postgres');
    const events = new ScriptedProbe('events', 'postgres-outbox');
    const nats = new ScriptedProbe('events', 'nats');
    const { clock } = manualClock();
    const outbox = createCheckReadiness({ required: [postgres], informational: [events], clock, timeoutMs: 1000, cacheMs: 0 })();
    const broker = createCheckReadiness({ required: [], informational: [nats], clock, timeoutMs: 1000, cacheMs: 0 })();
    await tick();
    postgres.answer();
    events.answer();
    nats.fail('not connected yet');
    expect((await outbox).checks.events).toEqual({ mode: 'postgres-outbox', status: 'ok', required: false });
    expect((await broker).checks.events).toEqual({ mode: 'nats', status: 'unavailable', required: false, reason: 'not connected yet' });
  });

  it('is unready when a required probe fails or does not answer in time', async () => {
    const postgres = new ScriptedProbe('postgres');
    const { clock } = manualClock();
    const check = createCheckReadiness({ required: [postgres], informational: [], clock, timeoutMs: 20, cacheMs: 0 });
    const hung = await check();
    expect(hung).toEqual({ ready: false, checks: { postgres: { status: 'unavailable', required: true, reason: 'no answer within 20 ms' } } });
    const failing = check();
    await tick();
    postgres.fail('connect ECONNREFUSED 127.0.0.1:5432');
    expect((await failing).checks.postgres).toMatchObject({ status: 'unavailable', reason: 'connect ECONNREFUSED 127.0.0.1:5432' });
  });

  it('shares one probe among concurrent callers and reuses the answer for cacheMs', async () => {
    const postgres = new ScriptedProbe('postgres');
    const { clock, advance } = manualClock();
    const check = createCheckReadiness({ required: [postgres], informational: [], clock, timeoutMs: 1000, cacheMs: 1000 });
    const callers = Array.from({ length: 100 }, () => check());
    await tick();
    expect(postgres.calls).toBe(1);
    postgres.answer();
    expect((await Promise.all(callers)).every((r) => r.ready)).toBe(true);

    advance(999);
    expect((await check()).ready).toBe(true);
    expect(postgres.calls).toBe(1);

    advance(1);
    const fresh = check();
    await tick();
    expect(postgres.calls).toBe(2);
    postgres.fail('gone');
    expect((await fresh).ready).toBe(false);
  });
});
