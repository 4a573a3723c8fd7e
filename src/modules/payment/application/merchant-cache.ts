import type { MerchantRecord, MerchantRepository } from '../../merchant/ports/merchant-repository.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';

/** The merchants a payment step reads, from a short cache. */
export interface MerchantCache {
  /** The merchant, from the cache or its repository; never call it inside a transaction (it would take a second connection). */
  merchantOf(merchantId: string): Promise<MerchantRecord>;
  /** The merchant inside a transaction: from the cache, or read through the transaction's own connection. */
  merchantIn(tx: TransactionScope, merchantId: string): Promise<MerchantRecord>;
}

/** How long a merchant read is reused. */
const MERCHANT_TTL_MS = 30_000;
/** Beyond this many merchants the cache starts again empty. */
const MAX_MERCHANTS = 10_000;

/** Builds the cache over the merchant repository. Merchants change rarely; a short cache spares a query per payment step. */
export function createMerchantCache(merchants: Pick<MerchantRepository, 'findById'>): MerchantCache {
  const cache = new Map<string, { merchant: MerchantRecord; until: number }>();
  async function cached(merchantId: string, read: (id: string) => Promise<MerchantRecord | undefined>): Promise<MerchantRecord> {
    const hit = cache.get(merchantId);
    if (hit && hit.until > Date.now()) return hit.merchant;
    const merchant = await read(merchantId);
    if (!merchant) throw new Error(`merchant ${merchantId} not found`);
    if (cache.size > MAX_MERCHANTS) cache.clear();
    cache.set(merchantId, { merchant, until: Date.now() + MERCHANT_TTL_MS });
    return merchant;
  }
  return {
    merchantOf: (merchantId) => cached(merchantId, (id) => merchants.findById(id)),
    merchantIn: (tx, merchantId) => cached(merchantId, (id) => tx.merchants.findById(id)),
  };
}
