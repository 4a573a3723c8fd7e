import { keyFromAuthorization, parseApiKey, type KeyKind } from '../domain/merchant/api-key.ts';
import type { Caller } from '../domain/merchant/caller.ts';
import { DomainError } from '../domain/shared/domain-error.ts';
import type { ApiKeyResolver } from '../ports/api-key-resolver.port.ts';

/** Turns an Authorization header into a verified caller. */
export type Authenticate = (authorization: string | null | undefined, required: KeyKind) => Promise<Caller>;

/**
 * Creates the authentication use case. The mode comes from the key alone:
 * test and live keys reach the same code with a different scope.
 */
export function createAuthenticate(deps: { readonly keys: ApiKeyResolver }): Authenticate {
  return async (authorization, required) => {
    const raw = keyFromAuthorization(authorization);
    const parsed = parseApiKey(raw);
    const caller = await deps.keys.resolve(raw);
    if (!caller) {
      throw new DomainError('auth.key_invalid', `Invalid API key ${redact(raw)}: it is unknown or has been revoked.`);
    }
    if (required === 'secret' && parsed.kind !== 'secret') {
      throw new DomainError('auth.secret_key_required', 'This call needs a secret key (sk_…); publishable keys (pk_…) may only be used from the checkout.');
    }
    return caller;
  };
}

/** Shows enough of a key to recognise it, never enough to use it. */
function redact(key: string): string {
  return `${key.slice(0, key.indexOf('_', 3) + 1)}…${key.slice(-4)}`;
}
