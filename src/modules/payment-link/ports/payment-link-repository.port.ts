import type { Scope } from '../../merchant/domain/caller.ts';
import type { PaymentLink } from '../domain/payment-link.entity.ts';

/** A page of payment links, newest first. */
export interface PaymentLinkPage {
  readonly links: readonly PaymentLink[];
  readonly hasMore: boolean;
}

/** Stores payment links. Reads by scope are confined to one merchant and mode. */
export interface PaymentLinkRepository {
  /** Stores a new link. */
  insert(link: PaymentLink): Promise<void>;
  /** The link with this id in the scope, or undefined (also for other merchants' and modes' ids). */
  findById(scope: Scope, id: string): Promise<PaymentLink | undefined>;
  /**
   * Lists links newest first.
   * @throws UnknownCursorError when startingAfter is not a link of the scope.
   */
  list(scope: Scope, query: { readonly limit: number; readonly startingAfter: string | undefined }): Promise<PaymentLinkPage>;
  /** The link a customer opened by its URL's suffix, whoever owns it; undefined if none. */
  findBySuffix(suffix: string): Promise<PaymentLink | undefined>;
  /**
   * Reads and row-locks a link until the transaction ends: what serialises the payments that
   * start on its orders. Undefined if absent.
   */
  lock(id: string): Promise<PaymentLink | undefined>;
  /**
   * Whether an order of the link other than `exceptOrderId` has a payment under way (processing,
   * or waiting for its 3-D Secure challenge): a single-use link's completion it holds.
   */
  hasPaymentInFlight(linkId: string, exceptOrderId: string): Promise<boolean>;
  /**
   * Stores a paid order counted (completed_payments, version).
   * @throws ConflictError when the stored version is not the one before it.
   */
  recordCompletion(link: PaymentLink): Promise<void>;
  /**
   * Stores a deactivation (deactivated_at, version).
   * @throws ConflictError when the stored version is not the one before it.
   */
  markDeactivated(link: PaymentLink): Promise<void>;
}
