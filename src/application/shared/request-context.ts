import { createContextKey } from '@connectrpc/connect';
import type { Caller } from '../../domain/merchant/caller.ts';

/**
 * The network address of the client that made a call, as the gateway saw it
 * (the socket's peer, or the first untrusted X-Forwarded-For hop when the
 * operator trusts a proxy). Set by every transport the gateway mounts;
 * undefined for calls made inside the process without a client.
 */
export const CLIENT_ADDRESS = createContextKey<string | undefined>(undefined, { description: 'client network address' });

/**
 * Set by the transport for each call; the core marks it when a method's
 * implementation is entered. A failure answered before that (a body that does
 * not decode, an unknown compression) was caused by the request, not by us.
 */
export const CALL_TRACE = createContextKey<{ entered: boolean } | undefined>(undefined, { description: 'whether the implementation was entered' });

/**
 * The caller an API key of this call was verified as (set by authentication once the key passed), so
 * that the request guard can tell a caller that an id it named belongs to its merchant's other mode.
 */
export const AUTHENTICATED_CALLER = createContextKey<Caller | undefined>(undefined, { description: 'the verified caller' });
