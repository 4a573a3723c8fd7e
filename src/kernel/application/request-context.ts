import { createContextKey } from '@connectrpc/connect';
import type { Caller } from '../../modules/merchant/domain/caller.ts';

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
 * True only for the hosted checkout page's own render: the gateway sets it on its in-process
 * GetCheckout for GET /c/<checkout id>, and no transport a client reaches sets it (the Connect
 * mount sets CLIENT_ADDRESS only). GetCheckout answers the order's checkout token to that call alone.
 * Context values do not cross a network: with the core in another process, the page would get none.
 */
export const HOSTED_PAGE = createContextKey<boolean>(false, { description: 'the hosted page rendering itself' });

/**
 * The caller an API key of this call was verified as (set by authentication once the key passed), so
 * that the request guard can tell a caller that an id it named belongs to its merchant's other mode.
 */
export const AUTHENTICATED_CALLER = createContextKey<Caller | undefined>(undefined, { description: 'the verified caller' });
