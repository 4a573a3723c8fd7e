import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Caller } from '../../domain/caller.ts';
import type { PaymentMethod } from '../../../payment/domain/payment-attempt.entity.ts';
import type { TestCard, TestCardBehaviour } from '../../../payment/domain/test-card.ts';
import type { ApiKeyResolver } from '../../ports/api-key-resolver.port.ts';
import type { MerchantRecord, MerchantRepository, NewApiKey, NewWebhookSecret } from '../../ports/merchant-repository.port.ts';
import type { TestCardDirectory } from '../../../payment/ports/test-card-directory.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import { defaultEndpointId } from '../../../webhook/domain/webhook-endpoint.entity.ts';
import { sealedSecretColumns } from '../../../webhook/adapters/postgres/postgres-webhook-endpoint-repository.ts';

/** SHA-256 hex of an API key: what the database keeps instead of the key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** SHA-256 hex of a test card number: what the database keeps instead of the number. */
export function hashCardNumber(number: string): string {
  return createHash('sha256').update(`card:${number}`).digest('hex');
}

/** api_keys rows for new keys: the key itself is kept only as its SHA-256 hash and last four characters. */
function apiKeyRows(merchantId: string, keys: readonly NewApiKey[], createdAt: Date) {
  return keys.map((key) => ({
    id: key.id,
    merchant_id: merchantId,
    kind: key.kind,
    livemode: key.livemode,
    key_hash: hashApiKey(key.secret),
    key_hint: key.secret.slice(-4),
    created_at: createdAt,
  }));
}

/** How long a resolved API key is trusted without asking the database again. */
export const KEY_CACHE_MS = 5000;

// Arbitrary constant naming the "first sandbox" advisory lock.
const FIRST_SANDBOX_LOCK = 0x636b6f31;

/** Merchants, their credentials and sandbox test cards on Postgres. */
/** Test cards found, by merchant and card-number hash (never the number): at most this many, then started afresh. */
const TEST_CARD_CACHE_SIZE = 10_000;
const testCardCache = new Map<string, TestCardBehaviour>();

export class PostgresMerchantRepository implements MerchantRepository, ApiKeyResolver, TestCardDirectory {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  insertWithCredentials(
    merchant: MerchantRecord,
    keys: readonly NewApiKey[],
    webhookSecrets: readonly NewWebhookSecret[],
    testCards: readonly TestCard[],
    options: { readonly onlyIfNoMerchants?: boolean } = {},
  ): Promise<boolean> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        if (options.onlyIfNoMerchants) {
          await trx.raw('SELECT pg_advisory_xact_lock(?)', [FIRST_SANDBOX_LOCK]);
          if (await trx('merchants').first('id')) return false;
        }
        await trx('merchants').insert({
          id: merchant.id,
          name: merchant.name,
          checkout_host: merchant.checkoutHost,
          settlement_currency: merchant.settlementCurrency,
          payment_methods: merchant.paymentMethods,
          created_at: merchant.createdAt,
        });
        if (testCards.length > 0) {
          await trx('test_cards').insert(
            testCards.map((card) => ({
              merchant_id: merchant.id,
              number_hash: hashCardNumber(card.number),
              last4: card.number.slice(-4),
              brand: card.brand,
              behaviour: card.behaviour,
              created_at: merchant.createdAt,
            })),
          );
        }
        await trx('api_keys').insert(apiKeyRows(merchant.id, keys, merchant.createdAt));
        // Each issued webhook secret belongs to a default endpoint, which waits for the merchant's URL.
        for (const s of webhookSecrets) {
          const endpointId = defaultEndpointId(merchant.id, s.livemode);
          await trx('webhook_endpoints').insert({
            id: endpointId,
            merchant_id: merchant.id,
            livemode: s.livemode,
            url: null,
            enabled_events: ['*'],
            description: 'Default endpoint (holds the webhook secret issued with the sandbox)',
            disabled_reason: 'no_url',
            is_default: true,
            created_at: merchant.createdAt,
            updated_at: merchant.createdAt,
          });
          await trx('webhook_endpoint_secrets').insert({ endpoint_id: endpointId, ...sealedSecretColumns(s.secret), created_at: merchant.createdAt });
        }
        return true;
      }),
    );
  }

  addApiKeys(merchantId: string, keys: readonly NewApiKey[], createdAt: Date): Promise<boolean> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        if (!(await trx('merchants').where({ id: merchantId }).first('id'))) return false;
        await trx('api_keys').insert(apiKeyRows(merchantId, keys, createdAt));
        return true;
      }),
    );
  }

  async findById(merchantId: string): Promise<MerchantRecord | undefined> {
    const row = await translateErrors(() => this.#knex('merchants').where({ id: merchantId }).first());
    if (!row) return undefined;
    return {
      id: row.id,
      name: row.name,
      checkoutHost: row.checkout_host,
      settlementCurrency: row.settlement_currency,
      paymentMethods: row.payment_methods as PaymentMethod[],
      createdAt: row.created_at,
    };
  }

  async behaviourOf(merchantId: string, cardNumber: string): Promise<TestCardBehaviour | undefined> {
    // A sandbox's test cards are written with it and never change: a card found once is kept (by hash).
    const key = `${merchantId}:${hashCardNumber(cardNumber)}`;
    const known = testCardCache.get(key);
    if (known) return known;
    const row = await translateErrors(() => this.#knex('test_cards').where({ merchant_id: merchantId, number_hash: hashCardNumber(cardNumber) }).first('behaviour'));
    if (row) {
      if (testCardCache.size >= TEST_CARD_CACHE_SIZE) testCardCache.clear();
      testCardCache.set(key, row.behaviour);
    }
    return row?.behaviour;
  }

  async isTestCard(cardNumber: string): Promise<boolean> {
    const row = await translateErrors(() => this.#knex('test_cards').where({ number_hash: hashCardNumber(cardNumber) }).first('merchant_id'));
    return row !== undefined;
  }

  async revokeKey(keyId: string): Promise<void> {
    this.#keyCache.clear();
    await translateErrors(() => this.#knex('api_keys').where({ id: keyId }).whereNull('revoked_at').update({ revoked_at: this.#knex.fn.now() }));
  }

  // Resolved keys, kept briefly to spare a query per request. Revoking through this
  // process clears it at once; another process may accept a revoked key for up to KEY_CACHE_MS.
  readonly #keyCache = new Map<string, { caller: Caller; until: number }>();

  async resolve(apiKey: string): Promise<Caller | undefined> {
    const hit = this.#keyCache.get(apiKey);
    if (hit && hit.until > Date.now()) return hit.caller;
    const caller = await this.#lookUp(apiKey);
    if (caller) {
      if (this.#keyCache.size >= 10_000) this.#keyCache.clear();
      this.#keyCache.set(apiKey, { caller, until: Date.now() + KEY_CACHE_MS });
    }
    return caller;
  }

  async #lookUp(apiKey: string): Promise<Caller | undefined> {
    const row = await translateErrors(() =>
      this.#knex('api_keys as k')
        .join('merchants as m', 'm.id', 'k.merchant_id')
        .select('k.id', 'k.merchant_id', 'k.livemode', 'k.kind', 'm.checkout_host')
        .where('k.key_hash', hashApiKey(apiKey))
        .whereNull('k.revoked_at')
        .first(),
    );
    if (!row) return undefined;
    return { keyId: row.id, merchantId: row.merchant_id, livemode: row.livemode, keyKind: row.kind, checkoutHost: row.checkout_host };
  }
}
