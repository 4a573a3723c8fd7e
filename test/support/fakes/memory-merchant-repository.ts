import { createHash } from 'node:crypto';
import type { Caller } from '../../../src/kernel/domain/caller.ts';
import type { TestCard, TestCardBehaviour } from '../../../src/modules/payment/domain/test-card.ts';
import type { ApiKeyResolver } from '../../../src/modules/merchant/ports/api-key-resolver.port.ts';
import type { MerchantReader, MerchantRecord, MerchantRepository, NewApiKey, NewWebhookSecret } from '../../../src/modules/merchant/ports/merchant-repository.port.ts';
import type { TestCardDirectory } from '../../../src/modules/payment/ports/test-card-directory.port.ts';
import { ConflictError } from '../../../src/kernel/ports/errors.ts';
import type { TablesRef } from './memory-tables.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const cardHash = (number: string) => sha256(`card:${number}`);

/** MerchantReader in memory (the unit of work's view of merchants). */
export class MemoryMerchantReader implements MerchantReader {
  protected readonly tables: TablesRef;

  constructor(tables: TablesRef) {
    this.tables = tables;
  }

  async findById(merchantId: string): Promise<MerchantRecord | undefined> {
    return this.tables().merchants.get(merchantId);
  }
}

/**
 * Merchants, their API keys (by hash) and sandbox test cards in memory. Webhook secrets are taken and
 * dropped: their default endpoints belong to the webhook fakes, which do not exist yet.
 */
export class MemoryMerchantRepository extends MemoryMerchantReader implements MerchantRepository, ApiKeyResolver, TestCardDirectory {
  async insertWithCredentials(
    merchant: MerchantRecord,
    keys: readonly NewApiKey[],
    _webhookSecrets: readonly NewWebhookSecret[],
    testCards: readonly TestCard[],
    options: { readonly onlyIfNoMerchants?: boolean } = {},
  ): Promise<boolean> {
    const tables = this.tables();
    if (options.onlyIfNoMerchants && tables.merchants.size > 0) return false;
    if (tables.merchants.has(merchant.id)) throw new ConflictError('The change conflicts with one made at the same time.');
    this.#checkKeys(keys);
    tables.merchants.set(merchant.id, { ...merchant, paymentMethods: [...merchant.paymentMethods] });
    for (const card of testCards) tables.testCards.set(`${merchant.id}:${cardHash(card.number)}`, card.behaviour);
    this.#insertKeys(merchant.id, keys);
    return true;
  }

  async addApiKeys(merchantId: string, keys: readonly NewApiKey[], _createdAt: Date): Promise<boolean> {
    if (!this.tables().merchants.has(merchantId)) return false;
    this.#checkKeys(keys);
    this.#insertKeys(merchantId, keys);
    return true;
  }

  #checkKeys(keys: readonly NewApiKey[]): void {
    const tables = this.tables();
    for (const key of keys) if (tables.apiKeys.has(key.id)) throw new ConflictError('The change conflicts with one made at the same time.');
  }

  #insertKeys(merchantId: string, keys: readonly NewApiKey[]): void {
    const tables = this.tables();
    for (const key of keys) tables.apiKeys.set(key.id, { id: key.id, merchantId, kind: key.kind, livemode: key.livemode, keyHash: sha256(key.secret), revoked: false });
  }

  async revokeKey(keyId: string): Promise<void> {
    const tables = this.tables();
    const key = tables.apiKeys.get(keyId);
    if (key) tables.apiKeys.set(keyId, { ...key, revoked: true });
  }

  async resolve(apiKey: string): Promise<Caller | undefined> {
    const tables = this.tables();
    const hash = sha256(apiKey);
    const key = [...tables.apiKeys.values()].find((k) => k.keyHash === hash && !k.revoked);
    const merchant = key && tables.merchants.get(key.merchantId);
    if (!key || !merchant) return undefined;
    return { keyId: key.id, merchantId: key.merchantId, livemode: key.livemode, keyKind: key.kind, checkoutHost: merchant.checkoutHost };
  }

  async behaviourOf(merchantId: string, cardNumber: string): Promise<TestCardBehaviour | undefined> {
    return this.tables().testCards.get(`${merchantId}:${cardHash(cardNumber)}`);
  }

  async isTestCard(cardNumber: string): Promise<boolean> {
    const suffix = `:${cardHash(cardNumber)}`;
    return [...this.tables().testCards.keys()].some((key) => key.endsWith(suffix));
  }
}
