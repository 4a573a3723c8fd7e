import { describe, expect, it } from 'vitest';
import { createLogger, pinoLog, serializeError } from './log.ts';

const PAN = '4242424242424242';

function capture(level = 'info', requestId?: () => string | undefined) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level, requestId, destination: { write: (chunk: string) => void lines.push(JSON.parse(chunk) as Record<string, unknown>) } });
  return { lines, log: pinoLog(logger) };
}

describe('serializeError', () => {
  it('masks card numbers in the message, the stack, the cause and any property', () => {
    const cause = new Error(`card ${PAN} refused`);
    const err = Object.assign(new SyntaxError(`Unexpected token, "{"number":"${PAN}"..." is not valid JSON`, { cause }), { detail: `Key (pan)=(${PAN})` });
    const text = JSON.stringify(serializeError(err));
    expect(text).not.toContain(PAN);
    expect(text).toContain('••••4242');
    expect(text).toContain('SyntaxError');
    expect(text).toContain('Key (pan)=(••••4242)');
  });

  it('keeps digits that are not a card number (fail the Luhn check)', () => {
    expect(JSON.stringify(serializeError(new Error('order 4242424242424241 of 16 digits')))).toContain('4242424242424241');
  });
});

describe('createLogger', () => {
  it('writes one JSON object per line with its level name, time, fields, and the error masked', () => {
    const { lines, log } = capture();
    log.warn(`could not pay with ${PAN}`, new Error(`declined ${PAN}`), { event_id: 'evt_1' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', msg: 'could not pay with ••••4242', event_id: 'evt_1', err: { message: 'declined ••••4242' } });
    expect(typeof lines[0]!.time).toBe('string');
  });

  it('adds the current request id to every line, and nothing outside a request', () => {
    let current: string | undefined = 'req_abc';
    const { lines, log } = capture('info', () => current);
    log.info('in a request');
    current = undefined;
    log.info('outside');
    expect(lines[0]).toMatchObject({ request_id: 'req_abc' });
    expect(lines[1]).not.toHaveProperty('request_id');
  });

  it('respects the level: debug lines are neither written nor said to be enabled at info', () => {
    const { lines, log } = capture('info');
    log.debug('hidden');
    expect(lines).toHaveLength(0);
    expect(log.debugEnabled()).toBe(false);
    expect(capture('debug').log.debugEnabled()).toBe(true);
  });
});
