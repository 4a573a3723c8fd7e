import type { Scope } from '../../merchant/domain/caller.ts';
import type { CardToken, SavedCard } from '../domain/saved-card.ts';
import type { SealedSecret, WrappedKey } from '../../../kernel/ports/key-ring.port.ts';

/** A saved card with its sealed secret, to be opened for one charge. */
export interface SealedCard {
  readonly card: SavedCard;
  readonly sealed: SealedSecret;
}

/** A data key of any sealed record, for rotation: where it is, the context it is bound to, and the key. */
export interface StoredKey extends WrappedKey {
  /** The record's kind and id ("card", "card_…"); the kind is the store's own business. */
  readonly record: string;
  readonly context: string;
}

/** What a held card is bound to: the order whose checkout asked to save it, and the payment that may. */
export interface HeldFor {
  readonly orderId: string;
  readonly paymentId: string;
}

/**
 * Stores vaulted cards, single-use card tokens and each merchant's fingerprint secret, all sealed.
 * A deletion deletes the ciphertext (the row), never only flags it.
 */
export interface CardVault {
  /** Stores a vaulted card. */
  insertCard(card: SavedCard, sealed: SealedSecret): Promise<void>;
  /** A card of a customer in the scope (undefined for another merchant's, mode's or customer's). */
  findCard(scope: Scope, customerId: string, cardId: string): Promise<SavedCard | undefined>;
  /** A card of a customer with its sealed secret. */
  findSealedCard(scope: Scope, customerId: string, cardId: string): Promise<SealedCard | undefined>;
  /** A customer's cards, newest first. */
  listCards(scope: Scope, customerId: string): Promise<SavedCard[]>;
  /** Deletes one card; false when there was none. */
  deleteCard(scope: Scope, customerId: string, cardId: string): Promise<boolean>;
  /** Deletes every card of a customer; answers how many. */
  deleteCardsOf(customerId: string): Promise<number>;
  /**
   * Stores a token; with `held`, the card a checkout asked to save, bound to the one payment it was
   * asked with (taken by takeHeldCard only, never by takeToken).
   */
  insertToken(token: CardToken, sealed: SealedSecret, held?: HeldFor): Promise<void>;
  /** Takes (deletes and answers) the card held for this payment, if any. */
  takeHeldCard(paymentId: string): Promise<{ readonly token: CardToken; readonly sealed: SealedSecret } | undefined>;
  /** A token still usable at `now` (the scope's, unexpired, not a held card), read without taking it. */
  findToken(scope: Scope, tokenId: string, now: Date): Promise<{ readonly token: CardToken; readonly sealed: SealedSecret } | undefined>;
  /** Takes a token for its one use: deleted and answered if it is the scope's and unexpired at `now`. */
  takeToken(scope: Scope, tokenId: string, now: Date): Promise<{ readonly token: CardToken; readonly sealed: SealedSecret } | undefined>;
  /** Deletes up to `limit` tokens expired at `now`; answers how many. */
  deleteExpiredTokens(now: Date, limit: number): Promise<number>;
  /** The merchant's sealed fingerprint secret, if it has one yet. */
  merchantSecret(merchantId: string): Promise<SealedSecret | undefined>;
  /** Stores the merchant's fingerprint secret unless one exists; answers the one that stands. */
  keepMerchantSecret(merchantId: string, sealed: SealedSecret, now: Date): Promise<SealedSecret>;
}

/** The vault's data keys as a whole (cards, tokens, fingerprint secrets, webhook signing secrets), for `checkout keys rotate`. */
export interface VaultKeys {
  /**
   * In one transaction: takes up to `limit` secrets still stored in clear (webhook signing secrets an
   * earlier release wrote), replaces each with `seal`'s answer, and answers how many it sealed.
   */
  sealClearBatch(limit: number, seal: (plaintext: string, context: string) => SealedSecret): Promise<number>;
  /**
   * In one transaction: takes up to `limit` data keys not wrapped by `activeKeyId` (skipping rows
   * another rotation holds), replaces each with `rewrap`'s answer, and answers how many it changed.
   */
  rewrapBatch(activeKeyId: string, limit: number, rewrap: (key: StoredKey) => WrappedKey): Promise<number>;
  /** How many data keys each KEK wraps, over every sealed record. */
  countByKek(): Promise<Record<string, number>>;
}
