import { createContextKey } from '@connectrpc/connect';

/**
 * The network address of the client that made a call, as the gateway saw it
 * (the socket's peer, or the first untrusted X-Forwarded-For hop when the
 * operator trusts a proxy). Set by every transport the gateway mounts;
 * undefined for calls made inside the process without a client.
 */
export const CLIENT_ADDRESS = createContextKey<string | undefined>(undefined, { description: 'client network address' });
