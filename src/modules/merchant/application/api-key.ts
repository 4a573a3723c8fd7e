import type { KeyKind, ParsedApiKey } from '../domain/api-key.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';


const KEY_PATTERN = /^(sk|pk)_(test|live)_[0-9A-Za-z]{24,128}$/;

/**
 * Reads the kind and mode of an API key from its text, without looking it up.
 * @throws ApplicationError auth.key_malformed when the text is not shaped like our keys.
 */
export function parseApiKey(raw: string): ParsedApiKey {
  const kindOf = (prefix: string): KeyKind => (prefix === 'sk' ? 'secret' : 'publishable');
  const match = KEY_PATTERN.exec(raw);
  if (!match) {
    throw new ApplicationError(
      'auth.key_malformed',
      'The API key is malformed. Send "Authorization: Bearer sk_test_…" (or sk_live_…) with the key exactly as issued.',
    );
  }
  return { kind: kindOf(match[1]!), livemode: match[2] === 'live' };
}

/**
 * Extracts the key from an Authorization header value.
 * @throws ApplicationError auth.key_missing or auth.key_malformed
 */
export function keyFromAuthorization(header: string | null | undefined): string {
  if (header === null || header === undefined || header.trim() === '') {
    throw new ApplicationError('auth.key_missing', 'No API key provided. Send your secret key as "Authorization: Bearer sk_test_…".');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  if (!match?.[1]) {
    throw new ApplicationError('auth.key_malformed', 'The Authorization header must be "Bearer <API key>".');
  }
  return match[1];
}
