import type { Card, CardBrand } from '../../payment/domain/card.ts';
import type { DeclineCode } from '../../payment/domain/decline-code.ts';

/** Prefix of vaulted cards' ids (the token reference a merchant keeps). */
export const CARD_ID_PREFIX = 'card_';
/** Prefix of single-use card tokens. */
export const TOKEN_ID_PREFIX = 'tok_';
/** How long a card token can be used: 10 minutes. */
export const TOKEN_TTL_MS = 10 * 60_000;
/** Most cards one customer may keep. */
export const MAX_CARDS_PER_CUSTOMER = 50;

/**
 * A vaulted card as every reader sees it: never more of the number than its last four digits.
 * The number itself lives only sealed, in the vault (docs/recurring.md).
 */
export interface SavedCard {
  /** "card_" + opaque suffix. */
  readonly id: string;
  readonly customerId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly brand: CardBrand;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
  /** The same for the same number within a merchant, different across merchants (a keyed hash). */
  readonly fingerprint: string;
  readonly createdAt: Date;
}

/** A single-use card token: what a browser or app holding only a publishable key hands its server. */
export interface CardToken {
  /** "tok_" + opaque suffix. */
  readonly id: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly brand: CardBrand;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

/**
 * What the vault seals: the number and the holder's name, and for a token only, the CVC until the
 * token's one use (a vaulted card's payload never has one: PCI DSS 3.3.1).
 */
export interface CardSecret {
  readonly number: string;
  readonly name: string;
  readonly cvc?: string;
}

/** The secret of a card, for sealing: a token keeps the CVC for its one use, a saved card never does. */
export function secretOf(card: Card, keepCvc: boolean): CardSecret {
  return keepCvc ? { number: card.number, name: card.name, cvc: card.cvc } : { number: card.number, name: card.name };
}

/** The card a saved card's (or token's) unsealed secret stands for, in memory for one charge only. */
export function cardFromSecret(secret: CardSecret, shown: Pick<SavedCard, 'brand' | 'last4' | 'expMonth' | 'expYear'>): Card {
  return { number: secret.number, name: secret.name, cvc: secret.cvc ?? '', brand: shown.brand, last4: shown.last4, expMonth: shown.expMonth, expYear: shown.expYear };
}

/** Serialises a secret for sealing (the vault encrypts this text). */
export function encodeSecret(secret: CardSecret): string {
  return JSON.stringify(secret.cvc === undefined ? [secret.number, secret.name] : [secret.number, secret.name, secret.cvc]);
}

/**
 * Reads a sealed secret's text back.
 * @throws Error when the text is not one encodeSecret wrote (a fault, never the caller's)
 */
export function decodeSecret(text: string): CardSecret {
  const parts = JSON.parse(text) as unknown;
  if (!Array.isArray(parts) || parts.length < 2 || parts.length > 3 || !parts.every((p) => typeof p === 'string')) throw new Error('vault: a sealed card has an unknown shape');
  const [number, name, cvc] = parts as string[];
  return cvc === undefined ? { number: number!, name: name! } : { number: number!, name: name!, cvc };
}

/**
 * How a zero-amount verification's decline bears on vaulting: declines that say the card is no good
 * refuse it; those about money or a passing outage do not (nothing was to be paid).
 */
export function refusesVaulting(code: DeclineCode): boolean {
  switch (code) {
    case 'insufficient_funds':
    case 'issuer_unavailable':
      return false;
    case 'expired_card':
    case 'stolen_card':
    case 'do_not_honor':
    case 'authentication_failed':
    case 'authentication_required':
    case 'test_card_unknown':
    case 'test_card_in_live_mode':
    case 'processing_unavailable':
      return true;
  }
}

/** True when a card's expiry month has passed at `now`. */
export function isExpired(card: Pick<SavedCard, 'expMonth' | 'expYear'>, now: Date): boolean {
  return card.expYear * 12 + card.expMonth - 1 < now.getUTCFullYear() * 12 + now.getUTCMonth();
}
