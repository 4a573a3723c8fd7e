import { describe, expect, it } from 'vitest';
import { brandOf, luhnValid } from './card.ts';
import { issueTestCards, type TestCardBehaviour } from './test-card.ts';

/** A deterministic digit source: a linear congruential generator from a seed. */
function seededDigits(seed: number): (count: number) => string {
  let state = seed;
  return (count) => {
    let out = '';
    for (let i = 0; i < count; i++) {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      out += String(state % 10);
    }
    return out;
  };
}

describe('issueTestCards', () => {
  const cards = issueTestCards(seededDigits(1));

  it('issues one card for each of the five behaviours', () => {
    expect(cards).toHaveLength(5);
    expect(cards.map((c) => c.behaviour).sort()).toEqual<TestCardBehaviour[]>(['approved', 'challenge', 'dispute', 'hard_decline', 'soft_decline']);
  });

  it('issues 16-digit, Luhn-valid numbers whose brand matches their prefix', () => {
    for (const card of cards) {
      expect(card.number).toMatch(/^\d{16}$/);
      expect(luhnValid(card.number), card.number).toBe(true);
      expect(brandOf(card.number)).toBe(card.brand);
      expect(card.description.length).toBeGreaterThan(0);
    }
    expect(cards.find((c) => c.behaviour === 'challenge')?.brand).toBe('mastercard');
  });

  it('gives each behaviour its own number', () => {
    expect(new Set(cards.map((c) => c.number)).size).toBe(5);
  });

  it('asks the digit source for the middle digits only', () => {
    const requests: number[] = [];
    issueTestCards((count) => {
      requests.push(count);
      return '0'.repeat(count);
    });
    // Prefix + requested digits + one check digit = 16.
    expect(requests).toEqual([14, 13, 14, 14, 14]);
  });

  it('issues different cards from different digit sources', () => {
    const other = issueTestCards(seededDigits(2));
    for (let i = 0; i < cards.length; i++) {
      expect(other[i]?.behaviour).toBe(cards[i]?.behaviour);
      expect(other[i]?.number).not.toBe(cards[i]?.number);
    }
  });

  it('gives each card of a sandbox its own last four digits, even from a source that repeats itself', () => {
    const same = issueTestCards((count) => '7'.repeat(count));
    expect(new Set(same.map((c) => c.number.slice(-4))).size).toBe(5);
    for (const card of same) expect(luhnValid(card.number), card.number).toBe(true);
  });

  it('issues the same cards from the same digit source', () => {
    expect(issueTestCards(seededDigits(1))).toEqual(cards);
  });
});
