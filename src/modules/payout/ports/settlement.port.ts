/** Which captured money a settlement run takes. */
export interface SettlementRun {
  readonly now: Date;
  /** Only this merchant's money in this mode (the test helper); every merchant's when absent. */
  readonly scope?: { readonly merchantId: string; readonly livemode: boolean };
  /** Settle what is captured until now, as if each merchant's delay had passed (test mode only). */
  readonly ignoreDelay: boolean;
  /** At most this many orders per call; the caller repeats until fewer come back. */
  readonly limit: number;
}

/**
 * Moves captured money from the merchants' pending to their available balance once their
 * settlement delay has passed: set-based, each order once (its settle transaction's id is derived
 * from it), safe to run from several processes and to repeat after a crash.
 */
export interface Settlement {
  /** Settles a batch of due orders; answers how many it settled. */
  settleDue(run: SettlementRun): Promise<number>;
}
