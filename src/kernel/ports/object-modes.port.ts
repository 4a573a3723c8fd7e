/**
 * Which mode holds a merchant's object, by its id: read only when a call named an id the caller's mode
 * does not have, to say that the other mode has it (as Stripe does), never anything of another merchant.
 */
export interface ObjectModes {
  /**
   * The mode (true: live) of the merchant's object with this id; undefined when the merchant has no such
   * object, or the id is of a kind that is not looked up by id.
   */
  modeOf(merchantId: string, id: string): Promise<boolean | undefined>;
}
