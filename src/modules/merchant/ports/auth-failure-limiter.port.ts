/**
 * Failed authentications counted per client address, shared by every
 * instance of the service: an address that fails too often in a window is
 * refused until the window ends, whatever key it sends next.
 */
export interface AuthFailureLimiter {
  /**
   * Whether `address` is refused at `now`, from what this process already
   * knows: the whole seconds to wait, or 0. It runs before every request that
   * carries a key, so it must answer without I/O.
   */
  refusedFor(address: string, now: Date): number;
  /**
   * Counts one failed authentication of `address` at `now`: the whole
   * seconds until the address may authenticate again when this failure
   * went over the limit (it is refused from then on until that time), or 0.
   */
  fail(address: string, now: Date): Promise<number>;
}
