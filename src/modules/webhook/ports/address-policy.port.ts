/**
 * Which hosts and addresses a webhook may reach. One policy serves both
 * modes and both moments: the URL check when an endpoint is registered, and
 * the sender, which judges every resolved and every connected address.
 */
export interface AddressPolicy {
  /** Whether the operator let webhooks reach loopback and private networks (WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  readonly allowPrivateNetworks: boolean;
  /**
   * Why a URL's host (a name, or a literal address with or without IPv6
   * brackets) is refused before any lookup, e.g. "127.0.0.1 is a loopback
   * address"; undefined when it may be tried. A name that passes is judged
   * again, by the addresses it resolves to, on every delivery.
   */
  refuseHost(host: string): string | undefined;
  /** Why a connection to this IP address is refused; undefined when it is allowed. */
  refuseAddress(address: string): string | undefined;
}
