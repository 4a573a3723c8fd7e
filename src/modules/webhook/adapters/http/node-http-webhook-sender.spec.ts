import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { EXCERPT_BYTES, responseExcerpt } from './node-http-webhook-sender.ts';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('responseExcerpt', () => {
  test('keeps at most the first 1024 bytes', () => {
    expect(EXCERPT_BYTES).toBe(1024);
    expect(responseExcerpt(Buffer.from('thanks'))).toBe('thanks');
    expect(responseExcerpt(Buffer.from('a'.repeat(1024)))).toBe('a'.repeat(1024));
    expect(responseExcerpt(Buffer.from('a'.repeat(1027)))).toBe('a'.repeat(1024));
    expect(responseExcerpt(Buffer.alloc(0))).toBe('');
  });

  test.each([
    ['é', 2],
    ['€', 3],
    ['𝄞', 4],
  ])('a %s (%i bytes) across the limit is left out whole, not cut into a replacement character', (char, size) => {
    for (let before = 1024 - size + 1; before <= 1023; before += 1) {
      const excerpt = responseExcerpt(Buffer.from(`${'a'.repeat(before)}${char}tail`, 'utf8'));
      expect(excerpt, `${before} bytes before it`).toBe('a'.repeat(before));
    }
    // Ending exactly on the limit, it is kept.
    const exact = responseExcerpt(Buffer.from(`${'a'.repeat(1024 - size)}${char}tail`, 'utf8'));
    expect(exact).toBe(`${'a'.repeat(1024 - size)}${char}`);
  });

  test('NUL (which Postgres text cannot hold) and invalid bytes become U+FFFD, and the text still fits in 1024 bytes', () => {
    expect(responseExcerpt(Buffer.from('ok\0done'))).toBe('ok\uFFFDdone');
    expect(responseExcerpt(Buffer.from([0x6f, 0x6b, 0xff, 0xfe]))).toBe('ok\uFFFD\uFFFD');
    const allNul = responseExcerpt(Buffer.alloc(2000));
    expect(bytes(allNul)).toBeLessThanOrEqual(1024);
    expect(allNul).toBe('\uFFFD'.repeat(341));
  });

  test('whatever the bytes: valid UTF-8 of at most 1024 bytes without NUL, a prefix of the decoded body', () => {
    for (let i = 0; i < 500; i += 1) {
      const body = randomBytes(900 + (i % 300));
      const excerpt = responseExcerpt(body);
      expect(bytes(excerpt)).toBeLessThanOrEqual(1024);
      expect(excerpt).not.toContain('\0');
      expect(Buffer.from(excerpt, 'utf8').toString('utf8')).toBe(excerpt);
    }
  });
});
