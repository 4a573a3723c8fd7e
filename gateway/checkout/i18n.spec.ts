import { describe, expect, it } from 'vitest';
import { attemptsText, fill, LANGUAGES, messagesFor, negotiateLocale } from './i18n.ts';

describe('negotiateLocale', () => {
  it('falls back to English', () => {
    expect(negotiateLocale(undefined)).toEqual({ language: 'en', locale: 'en' });
    expect(negotiateLocale('fr-FR, es;q=0.5')).toEqual({ language: 'en', locale: 'en' });
    expect(negotiateLocale('*')).toEqual({ language: 'en', locale: 'en' });
  });

  it('picks the best-rated language the catalogue has, keeping its region', () => {
    expect(negotiateLocale('fr-CH, de-AT;q=0.8, en;q=0.9')).toEqual({ language: 'en', locale: 'en' });
    expect(negotiateLocale('fr-CH, de-at;q=0.9, en;q=0.8')).toEqual({ language: 'de', locale: 'de-AT' });
    expect(negotiateLocale('en-GB,en;q=0.9')).toEqual({ language: 'en', locale: 'en-GB' });
    expect(negotiateLocale('de;q=0, en-US')).toEqual({ language: 'en', locale: 'en-US' });
  });

  it('ignores extensions and junk that would steer formatting', () => {
    expect(negotiateLocale('de-DE-u-nu-arab')).toEqual({ language: 'de', locale: 'de-DE' });
    expect(negotiateLocale('<script>, de')).toEqual({ language: 'de', locale: 'de' });
  });
});

describe('message catalogue', () => {
  it('has the same placeholders in every language', () => {
    const placeholders = (value: unknown): string[] =>
      typeof value === 'string'
        ? [...value.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort()
        : Object.entries(value as object).flatMap(([k, v]) => placeholders(v).map((p) => `${k}.${p}`));
    const en = messagesFor('en');
    for (const language of LANGUAGES) {
      const messages = messagesFor(language);
      for (const key of Object.keys(en) as (keyof typeof en)[]) expect([language, key, placeholders(messages[key])]).toEqual([language, key, placeholders(en[key])]);
    }
  });

  it('fills placeholders and pluralises attempts', () => {
    expect(fill('Pay {merchant} {missing}', { merchant: 'Shop' })).toBe('Pay Shop {missing}');
    expect([attemptsText('en', 1), attemptsText('en', 3), attemptsText('de', 1), attemptsText('de', 2)]).toEqual([
      '1 attempt remaining.',
      '3 attempts remaining.',
      'Noch 1 Versuch.',
      'Noch 2 Versuche.',
    ]);
  });
});
