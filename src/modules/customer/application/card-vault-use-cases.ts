import { createHash, timingSafeEqual } from 'node:crypto';
import type { Scope } from '../../merchant/domain/caller.ts';
import type { Card } from '../../payment/domain/card.ts';
import { DECLINES } from '../../payment/domain/decline-code.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import {
  CARD_ID_PREFIX,
  MAX_CARDS_PER_CUSTOMER,
  TOKEN_ID_PREFIX,
  TOKEN_TTL_MS,
  cardFromSecret,
  decodeSecret,
  encodeSecret,
  refusesVaulting,
  secretOf,
  type CardToken,
  type SavedCard,
} from '../domain/saved-card.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { TestCardDirectory } from '../../payment/ports/test-card-directory.port.ts';
import type { CardVault } from '../ports/card-vault.port.ts';
import type { KeyRing, SealedSecret } from '../../../kernel/ports/key-ring.port.ts';
import type { CardSaving } from '../../payment/application/card-saving.ts';
import type { PaymentProcessor } from '../../payment/ports/payment-processor.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';

/**
 * What the vault's use cases run on: the payment engine's routes to verify a card with, not the
 * engine itself (the engine saves a paying card through {@link CardVaultUseCases.saving}).
 */
export interface CardVaultDeps {
  readonly keys: KeyRing;
  /** Reads outside any transaction (a charge's card). */
  readonly reads: CardVault;
  /** The merchant's acquirer routes in a mode, first to last, read through `tx` (empty: none configured). */
  readonly routesIn: (tx: TransactionScope, scope: Scope) => Promise<readonly PaymentProcessor[]>;
  readonly testCards: TestCardDirectory;
  /** A release at an acquirer that failed, or a held card that could not be opened. */
  readonly onBackgroundError: (err: unknown) => void;
  readonly ids: IdGenerator;
  readonly clock: Clock;
}

/** How a card reaches the vault: typed (its CVC to verify), or already authorized by a payment (saved once per customer). */
export type VaultSource = { readonly kind: 'verify'; readonly card: Card } | { readonly kind: 'paid'; readonly card: Card };

/** Card fields as a request carries them, before parseCard's checks. */
export interface RequestCardFields {
  readonly number: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvc: string;
  readonly name: string;
}

/** The vault's use cases, shared by the customer API, the tokenizer, the checkout page and charges. */
export interface CardVaultUseCases {
  /**
   * Vaults a card for a customer the caller has locked in `tx`: the CVC checked with the issuer once
   * (unless a payment just did), the number and name sealed, the fingerprint computed.
   * @throws DomainError vault.card_declined, vault.card_limit_reached, vault.unavailable
   */
  vaultCard(tx: TransactionScope, scope: Scope, customerId: string, source: VaultSource): Promise<SavedCard>;
  /** Creates a single-use token holding the card (CVC included, for its one use) for 10 minutes. */
  createToken(tx: TransactionScope, scope: Scope, card: Card): Promise<CardToken>;
  /**
   * Takes a token for its one use: the card it holds, in memory.
   * @throws DomainError vault.token_invalid when it is unknown, used, expired, or another merchant's or mode's
   */
  takeToken(tx: TransactionScope, scope: Scope, tokenId: string): Promise<Card>;
  /** The checkout's "save this card", for the payment engine: held for one payment, saved with its success only. */
  readonly saving: CardSaving;
  /**
   * The card fields of a request, for its Idempotency-Key's fingerprint: HMAC-SHA-256, keyed by the
   * merchant's fingerprint secret (the key of the vault's card fingerprints), of the number, expiry
   * and name as parseCard reads them. Never the CVC: no trace of it outlives the token that holds
   * it (PCI DSS 3.3.1); {@link tokenHoldsCard} compares it while that token lives.
   * @throws DomainError vault.unavailable (live mode without a configured vault key)
   */
  requestFingerprint(scope: Scope, card: RequestCardFields): Promise<string>;
  /**
   * Whether the token still usable under this id holds exactly this card, CVC included (compared
   * in memory, in constant time). True when no usable token is left (used or expired): there is
   * nothing to compare, and the token it names can no longer be used.
   */
  tokenHoldsCard(tx: TransactionScope, scope: Scope, tokenId: string, card: RequestCardFields): Promise<boolean>;
  /** A saved card opened for one charge, with what every reader sees of it; undefined if not the customer's. */
  openCard(scope: Scope, customerId: string, cardId: string): Promise<{ readonly saved: SavedCard; readonly card: Card } | undefined>;
}

/**
 * Creates the vault's use cases. Live mode refuses to vault with a development key (the operator
 * must configure VAULT_KEYS) and without a live acquirer to verify the card with.
 */
export function createCardVaultUseCases(deps: CardVaultDeps): CardVaultUseCases {
  const { keys } = deps;

  function assertUsable(scope: Scope): void {
    if (scope.livemode && !keys.configured) {
      throw new DomainError('vault.unavailable', 'Live-mode cards cannot be vaulted: the operator has configured no vault key (VAULT_KEYS); see docs/recurring.md.');
    }
  }

  /** HMAC-SHA-256 of `data` keyed by the merchant's fingerprint secret (made, sealed, on first use), read through `store`. */
  async function fingerprint(store: CardVault, merchantId: string, data: string): Promise<string> {
    let sealed = await store.merchantSecret(merchantId);
    sealed ??= await store.keepMerchantSecret(merchantId, keys.seal(keys.newSecret(), merchantId), deps.clock.now());
    return keys.keyedHash(keys.open(sealed, merchantId), data);
  }

  /** A request's card fields as parseCard reads them: the same card typed another way is the same card. */
  const canonical = (card: RequestCardFields) => ({
    number: card.number.replace(/[\s-]/g, ''),
    expMonth: card.expMonth,
    expYear: card.expYear < 100 ? 2000 + card.expYear : card.expYear,
    name: card.name.trim(),
  });

  /** A zero-amount authorization, released at once: what the issuer says of the card and its CVC. */
  async function verify(tx: TransactionScope, scope: Scope, card: Card): Promise<void> {
    const refuse = (code: keyof typeof DECLINES) => {
      throw new DomainError('vault.card_declined', `The card could not be verified: ${DECLINES[code].operatorMessage}`, 'card');
    };
    if (scope.livemode && (await deps.testCards.isTestCard(card.number))) refuse('test_card_in_live_mode');
    // The card is verified on the route its payments go to first.
    const [route] = await deps.routesIn(tx, scope);
    if (!route) throw new DomainError('vault.unavailable', 'Cards cannot be verified in this mode: no acquirer route is configured.');
    const merchant = await tx.merchants.findById(scope.merchantId);
    if (!merchant) throw new Error(`merchant ${scope.merchantId} not found`);
    const reference = deps.ids.newId('ver_');
    const answer = await route.authorize({
      attemptId: reference,
      merchantId: scope.merchantId,
      livemode: scope.livemode,
      amount: 0n,
      currency: merchant.settlementCurrency,
      card,
      returnUrl: undefined,
      reference,
    });
    switch (answer.kind) {
      case 'approved':
      case 'action':
        // Nothing to pay; a challenge is asked again when the card pays on the page (off-session, it declines).
        // A failed release leaves a zero-amount hold that lapses by itself.
        await route.void(answer.processorRef, `${reference}/void`).catch((err: unknown) => deps.onBackgroundError(err));
        return;
      case 'pending':
        // Only an explicit answer verifies a card: what is held is released, and the card is not saved.
        await route.void(answer.processorRef, `${reference}/void`).catch((err: unknown) => deps.onBackgroundError(err));
        throw new DomainError('vault.unavailable', 'The card could not be verified now: the issuer has not answered. Try again in a moment.');
      case 'declined':
        if (refusesVaulting(answer.declineCode)) refuse(answer.declineCode);
    }
  }

  function seal(secret: ReturnType<typeof secretOf>, context: string): SealedSecret {
    return keys.seal(encodeSecret(secret), context);
  }

  const tokenOf = (scope: Scope, card: Card, now: Date): CardToken => ({
    id: deps.ids.newId(TOKEN_ID_PREFIX),
    merchantId: scope.merchantId,
    livemode: scope.livemode,
    brand: card.brand,
    last4: card.last4,
    expMonth: card.expMonth,
    expYear: card.expYear,
    createdAt: now,
    expiresAt: new Date(now.getTime() + TOKEN_TTL_MS),
  });

  async function vaultCard(tx: TransactionScope, scope: Scope, customerId: string, source: VaultSource): Promise<SavedCard> {
    assertUsable(scope);
    const { card } = source;
    if (source.kind === 'verify') await verify(tx, scope, card);
    const existing = await tx.vault.listCards(scope, customerId);
    const fingerprinted = await fingerprint(tx.vault, scope.merchantId, card.number);
    // The page saves a card once: paying again with a card the customer already keeps saves nothing new.
    const same = existing.find((c) => c.fingerprint === fingerprinted && c.expMonth === card.expMonth && c.expYear === card.expYear);
    if (source.kind === 'paid' && same) return same;
    if (existing.length >= MAX_CARDS_PER_CUSTOMER) {
      throw new DomainError('vault.card_limit_reached', `A customer may keep at most ${MAX_CARDS_PER_CUSTOMER} cards; delete one first.`);
    }
    const saved: SavedCard = {
      id: deps.ids.newId(CARD_ID_PREFIX),
      customerId,
      merchantId: scope.merchantId,
      livemode: scope.livemode,
      brand: card.brand,
      last4: card.last4,
      expMonth: card.expMonth,
      expYear: card.expYear,
      fingerprint: fingerprinted,
      createdAt: deps.clock.now(),
    };
    // The CVC is left out here, whatever the source: never stored after its check (PCI DSS 3.3.1).
    await tx.vault.insertCard(saved, seal(secretOf(card, false), saved.id));
    return saved;
  }

  const saving: CardSaving = {
    async hold(tx, order, paymentId, card) {
      const scope = { merchantId: order.merchantId, livemode: order.livemode };
      assertUsable(scope);
      const now = deps.clock.now();
      // Kept as long as the payment may still succeed (a challenge waits at most until the order
      // expires); the payment's end drops it sooner. The expiry only lets the token sweep take a
      // card a stopped process left behind.
      const token = { ...tokenOf(scope, card, now), expiresAt: new Date(Math.max(now.getTime(), order.expiresAt.getTime()) + TOKEN_TTL_MS) };
      await tx.vault.insertToken(token, seal(secretOf(card, false), token.id), { orderId: order.id, paymentId });
    },
    async save(tx, order, paymentId) {
      const taken = await tx.vault.takeHeldCard(paymentId);
      if (!taken || !order.customerId || taken.token.merchantId !== order.merchantId || taken.token.livemode !== order.livemode) return;
      let card: Card;
      try {
        card = cardFromSecret(decodeSecret(keys.open(taken.sealed, taken.token.id)), taken.token);
      } catch (err) {
        // The payment stands; only the saving failed (its KEK gone, say), reported to the operator.
        deps.onBackgroundError(err);
        return;
      }
      const scope = { merchantId: order.merchantId, livemode: order.livemode };
      // A customer deleted meanwhile gets nothing saved (its deletion takes this lock too).
      if (!(await tx.customers.lock(scope, order.customerId))) return;
      try {
        await vaultCard(tx, scope, order.customerId, { kind: 'paid', card });
      } catch (err) {
        // At the card limit (found before anything is written): the payment stands, nothing is saved.
        if (err instanceof DomainError && err.code === 'vault.card_limit_reached') return;
        throw err;
      }
    },
    async drop(tx, paymentId) {
      await tx.vault.takeHeldCard(paymentId);
    },
  };

  return {
    saving,
    vaultCard,
    async createToken(tx, scope, card) {
      assertUsable(scope);
      const now = deps.clock.now();
      // Tokens nobody used are erased as new ones come; reads never see an expired one anyway.
      await tx.vault.deleteExpiredTokens(now, 100);
      const token = tokenOf(scope, card, now);
      await tx.vault.insertToken(token, seal(secretOf(card, true), token.id));
      return token;
    },
    async takeToken(tx, scope, tokenId) {
      const taken = tokenId.startsWith(TOKEN_ID_PREFIX) ? await tx.vault.takeToken(scope, tokenId, deps.clock.now()) : undefined;
      if (!taken) throw new DomainError('vault.token_invalid', `No usable token "${tokenId.slice(0, 40)}": a token works once, within 10 minutes, with the keys of the merchant and mode that made it.`, 'token');
      return cardFromSecret(decodeSecret(keys.open(taken.sealed, taken.token.id)), taken.token);
    },
    async requestFingerprint(scope, card) {
      assertUsable(scope);
      const c = canonical(card);
      // Tagged, so that it can never equal a card's fingerprint (the bare number under the same key).
      return fingerprint(deps.reads, scope.merchantId, JSON.stringify(['idempotency-request', c.number, c.expMonth, c.expYear, c.name]));
    },
    async tokenHoldsCard(tx, scope, tokenId, card) {
      const found = tokenId.startsWith(TOKEN_ID_PREFIX) ? await tx.vault.findToken(scope, tokenId, deps.clock.now()) : undefined;
      if (!found) return true;
      const held = decodeSecret(keys.open(found.sealed, found.token.id));
      const c = canonical(card);
      const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
      const same = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));
      return same(held.number, c.number) && same(held.name, c.name) && same(held.cvc ?? '', card.cvc) && found.token.expMonth === c.expMonth && found.token.expYear === c.expYear;
    },
    async openCard(scope, customerId, cardId) {
      if (!cardId.startsWith(CARD_ID_PREFIX)) return undefined;
      const found = await deps.reads.findSealedCard(scope, customerId, cardId);
      if (!found) return undefined;
      return { saved: found.card, card: cardFromSecret(decodeSecret(keys.open(found.sealed, found.card.id)), found.card) };
    },
  };
}

/** The error of a card id that is not the customer's. */
export function cardNotFound(cardId: string, param = 'card'): ApplicationError {
  return new ApplicationError('vault.card_not_found', `No such card: "${cardId.slice(0, 60)}" (for this customer, merchant and mode).`, param);
}
