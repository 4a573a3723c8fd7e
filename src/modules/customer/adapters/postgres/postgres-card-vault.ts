import type { Knex } from 'knex';
import type { CardBrand } from '../../../payment/domain/card.ts';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { CardToken, SavedCard } from '../../domain/saved-card.ts';
import type { CardVault, HeldFor, SealedCard, StoredKey, VaultKeys } from '../../ports/card-vault.port.ts';
import type { SealedSecret, WrappedKey } from '../../../../kernel/ports/key-ring.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

interface SealedColumns {
  kek_id: string;
  wrapped_key: Buffer;
  ciphertext: Buffer;
}

interface CardRow extends SealedColumns {
  id: string;
  customer_id: string;
  merchant_id: string;
  livemode: boolean;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  created_at: Date;
}

interface TokenRow extends SealedColumns {
  id: string;
  merchant_id: string;
  livemode: boolean;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  created_at: Date;
  expires_at: Date;
}

const sealedColumns = (sealed: SealedSecret): SealedColumns => ({ kek_id: sealed.kekId, wrapped_key: Buffer.from(sealed.wrappedKey), ciphertext: Buffer.from(sealed.ciphertext) });
const sealedOf = (row: SealedColumns): SealedSecret => ({ kekId: row.kek_id, wrappedKey: row.wrapped_key, ciphertext: row.ciphertext });

/** The columns every reader may see: never the sealed ones. */
const CARD_COLUMNS = ['id', 'customer_id', 'merchant_id', 'livemode', 'brand', 'last4', 'exp_month', 'exp_year', 'fingerprint', 'created_at'] as const;

function cardOf(row: Omit<CardRow, keyof SealedColumns>): SavedCard {
  return {
    id: row.id,
    customerId: row.customer_id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    brand: row.brand as CardBrand,
    last4: row.last4,
    expMonth: row.exp_month,
    expYear: row.exp_year,
    fingerprint: row.fingerprint,
    createdAt: new Date(row.created_at),
  };
}

function tokenOf(row: TokenRow): CardToken {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    brand: row.brand as CardBrand,
    last4: row.last4,
    expMonth: row.exp_month,
    expYear: row.exp_year,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
  };
}

/** CardVault on Postgres; pass a transaction to take part in one. */
export class PostgresCardVault implements CardVault {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  #cards(scope: Scope, customerId: string) {
    return this.#db<CardRow>('vault_cards').where({ customer_id: customerId, merchant_id: scope.merchantId, livemode: scope.livemode });
  }

  async insertCard(card: SavedCard, sealed: SealedSecret): Promise<void> {
    await translateErrors(() =>
      this.#db('vault_cards').insert({
        id: card.id,
        customer_id: card.customerId,
        merchant_id: card.merchantId,
        livemode: card.livemode,
        brand: card.brand,
        last4: card.last4,
        exp_month: card.expMonth,
        exp_year: card.expYear,
        fingerprint: card.fingerprint,
        created_at: card.createdAt,
        ...sealedColumns(sealed),
      }),
    );
  }

  async findCard(scope: Scope, customerId: string, cardId: string): Promise<SavedCard | undefined> {
    const row = await translateErrors(() => this.#cards(scope, customerId).where({ id: cardId }).first(...CARD_COLUMNS));
    return row ? cardOf(row) : undefined;
  }

  async findSealedCard(scope: Scope, customerId: string, cardId: string): Promise<SealedCard | undefined> {
    const row = await translateErrors(() => this.#cards(scope, customerId).where({ id: cardId }).first());
    return row ? { card: cardOf(row), sealed: sealedOf(row) } : undefined;
  }

  async listCards(scope: Scope, customerId: string): Promise<SavedCard[]> {
    const rows = await translateErrors(() =>
      this.#cards(scope, customerId)
        .select(...CARD_COLUMNS)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ]),
    );
    return rows.map(cardOf);
  }

  async deleteCard(scope: Scope, customerId: string, cardId: string): Promise<boolean> {
    return (await translateErrors(() => this.#cards(scope, customerId).where({ id: cardId }).delete())) === 1;
  }

  async deleteCardsOf(customerId: string): Promise<number> {
    return translateErrors(() => this.#db('vault_cards').where({ customer_id: customerId }).delete());
  }

  async insertToken(token: CardToken, sealed: SealedSecret, held?: HeldFor): Promise<void> {
    await translateErrors(() =>
      this.#db('vault_tokens').insert({
        id: token.id,
        merchant_id: token.merchantId,
        livemode: token.livemode,
        brand: token.brand,
        last4: token.last4,
        exp_month: token.expMonth,
        exp_year: token.expYear,
        created_at: token.createdAt,
        expires_at: token.expiresAt,
        order_id: held?.orderId ?? null,
        payment_id: held?.paymentId ?? null,
        ...sealedColumns(sealed),
      }),
    );
  }

  async findToken(scope: Scope, tokenId: string, now: Date): Promise<{ token: CardToken; sealed: SealedSecret } | undefined> {
    const row = await translateErrors(() =>
      this.#db<TokenRow>('vault_tokens').where({ id: tokenId, merchant_id: scope.merchantId, livemode: scope.livemode }).whereNull('order_id').andWhere('expires_at', '>', now).first(),
    );
    return row ? { token: tokenOf(row), sealed: sealedOf(row) } : undefined;
  }

  async takeToken(scope: Scope, tokenId: string, now: Date): Promise<{ token: CardToken; sealed: SealedSecret } | undefined> {
    // Deleted as it is read: a second use (even a concurrent one) finds nothing.
    const rows = await translateErrors(() =>
      this.#db<TokenRow>('vault_tokens').where({ id: tokenId, merchant_id: scope.merchantId, livemode: scope.livemode }).whereNull('order_id').andWhere('expires_at', '>', now).delete().returning('*'),
    );
    const row = (rows as unknown as TokenRow[])[0];
    return row ? { token: tokenOf(row), sealed: sealedOf(row) } : undefined;
  }

  async takeHeldCard(paymentId: string): Promise<{ token: CardToken; sealed: SealedSecret } | undefined> {
    const rows = await translateErrors(() => this.#db('vault_tokens').where('payment_id', paymentId).delete().returning('*'));
    const row = (rows as unknown as TokenRow[])[0];
    return row ? { token: tokenOf(row), sealed: sealedOf(row) } : undefined;
  }

  async deleteExpiredTokens(now: Date, limit: number): Promise<number> {
    return translateErrors(() =>
      this.#db('vault_tokens')
        .whereIn('id', this.#db('vault_tokens').select('id').where('expires_at', '<=', now).limit(limit))
        .delete(),
    );
  }

  async merchantSecret(merchantId: string): Promise<SealedSecret | undefined> {
    const row = await translateErrors(() => this.#db<SealedColumns & { merchant_id: string }>('vault_merchant_secrets').where({ merchant_id: merchantId }).first());
    return row ? sealedOf(row) : undefined;
  }

  async keepMerchantSecret(merchantId: string, sealed: SealedSecret, now: Date): Promise<SealedSecret> {
    await translateErrors(() =>
      this.#db('vault_merchant_secrets')
        .insert({ merchant_id: merchantId, created_at: now, ...sealedColumns(sealed) })
        .onConflict('merchant_id')
        .ignore(),
    );
    // Two first vaultings of a merchant at once: the one stored first stands for both.
    return (await this.merchantSecret(merchantId))!;
  }
}

/**
 * The sealed tables, each with the column that names a record and the one its secret is bound to
 * (its context). A webhook signing secret is bound to its endpoint; a row still in clear (kek_id
 * null) is not a data key yet.
 */
const SEALED_TABLES = [
  { table: 'vault_cards', kind: 'card', id: 'id', context: 'id' },
  { table: 'vault_tokens', kind: 'token', id: 'id', context: 'id' },
  { table: 'vault_merchant_secrets', kind: 'merchant', id: 'merchant_id', context: 'merchant_id' },
  { table: 'webhook_endpoint_secrets', kind: 'webhook_secret', id: 'id', context: 'endpoint_id' },
] as const;

/** VaultKeys on Postgres: rotation in batches, each its own short transaction. */
export class PostgresVaultKeys implements VaultKeys {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  async rewrapBatch(activeKeyId: string, limit: number, rewrap: (key: StoredKey) => WrappedKey): Promise<number> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        let changed = 0;
        for (const { table, kind, id, context } of SEALED_TABLES) {
          if (changed >= limit) break;
          // SKIP LOCKED: two rotations at once share the work; a charge reading a row is not blocked (reads take no lock).
          const rows = (await trx(table)
            .select(`${id} as record_id`, `${context} as context`, 'kek_id', 'wrapped_key')
            .whereNot('kek_id', activeKeyId)
            .orderBy(id)
            .limit(limit - changed)
            .forUpdate()
            .skipLocked()) as { record_id: string; context: string; kek_id: string; wrapped_key: Buffer }[];
          for (const row of rows) {
            const next = rewrap({ record: `${kind}:${row.record_id}`, context: row.context, kekId: row.kek_id, wrappedKey: row.wrapped_key });
            await trx(table)
              .where({ [id]: row.record_id, kek_id: row.kek_id })
              .update({ kek_id: next.kekId, wrapped_key: Buffer.from(next.wrappedKey) });
            changed++;
          }
        }
        return changed;
      }),
    );
  }

  async sealClearBatch(limit: number, seal: (plaintext: string, context: string) => SealedSecret): Promise<number> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        const rows = (await trx('webhook_endpoint_secrets')
          .select('id', 'endpoint_id', 'secret')
          .whereNotNull('secret')
          .orderBy('id')
          .limit(limit)
          .forUpdate()
          .skipLocked()) as { id: string; endpoint_id: string; secret: string }[];
        for (const row of rows) {
          await trx('webhook_endpoint_secrets')
            .where({ id: row.id })
            .whereNotNull('secret')
            .update({ ...sealedColumns(seal(row.secret, row.endpoint_id)), secret: null });
        }
        return rows.length;
      }),
    );
  }

  async countByKek(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const { table } of SEALED_TABLES) {
      const rows = (await translateErrors(() => this.#knex(table).whereNotNull('kek_id').select('kek_id').count<{ kek_id: string; count: string }[]>('* as count').groupBy('kek_id'))) as unknown as {
        kek_id: string;
        count: string;
      }[];
      for (const row of rows) counts[row.kek_id] = (counts[row.kek_id] ?? 0) + Number(row.count);
    }
    return counts;
  }
}
