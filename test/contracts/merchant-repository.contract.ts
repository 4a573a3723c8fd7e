// The contract of MerchantRepository with ApiKeyResolver and TestCardDirectory (src/modules/merchant/ports/,
// src/modules/payment/ports/test-card-directory.port.ts), which every adapter passes: the Postgres repository
// and the in-memory fake (test/storage-ports.contract.test.ts).
import { describe, expect, test } from 'vitest';
import { aMerchant, anApiKey, givenMerchant } from '../support/builders.ts';
import type { StoreUnderTest } from './stores.ts';

/** Runs the MerchantRepository/ApiKeyResolver contract against the store `store()` answers. */
export function merchantRepositoryContract(store: () => StoreUnderTest): void {
  describe('MerchantRepository and ApiKeyResolver', () => {
    test('stores a merchant with its keys: found by id, each key resolves to its merchant, mode and kind', async () => {
      const s = store();
      const merchant = aMerchant({ settlementCurrency: 'GBP', paymentMethods: ['card'] });
      const test_ = anApiKey();
      const live = anApiKey({ livemode: true, kind: 'publishable', secret: `pk_live_${merchant.id}` });
      expect(await s.merchants.insertWithCredentials(merchant, [test_, live], [], [])).toBe(true);
      expect(await s.merchants.findById(merchant.id)).toEqual(merchant);
      expect(await s.merchants.findById('mer_none')).toBeUndefined();
      expect(await s.merchants.resolve(test_.secret)).toEqual({ keyId: test_.id, merchantId: merchant.id, livemode: false, keyKind: 'secret', checkoutHost: merchant.checkoutHost });
      expect(await s.merchants.resolve(live.secret)).toMatchObject({ keyId: live.id, livemode: true, keyKind: 'publishable' });
      expect(await s.merchants.resolve('sk_test_unknown')).toBeUndefined();
    });

    test('a revoked key resolves to nothing; the merchant\'s other keys still do', async () => {
      const s = store();
      const { merchant, key } = await givenMerchant(s);
      const second = anApiKey();
      expect(await s.merchants.addApiKeys(merchant.id, [second], new Date())).toBe(true);
      expect(await s.merchants.resolve(key.secret)).toBeDefined();
      await s.merchants.revokeKey(key.id);
      expect(await s.merchants.resolve(key.secret)).toBeUndefined();
      expect(await s.merchants.resolve(second.secret)).toMatchObject({ keyId: second.id });
    });

    test('keys for a merchant that does not exist are refused, and stored nowhere', async () => {
      const s = store();
      const orphan = anApiKey();
      expect(await s.merchants.addApiKeys('mer_none', [orphan], new Date())).toBe(false);
      expect(await s.merchants.resolve(orphan.secret)).toBeUndefined();
    });

    test('onlyIfNoMerchants stores nothing once any merchant exists', async () => {
      const s = store();
      await givenMerchant(s);
      const first = aMerchant();
      const key = anApiKey();
      expect(await s.merchants.insertWithCredentials(first, [key], [], [], { onlyIfNoMerchants: true })).toBe(false);
      expect(await s.merchants.findById(first.id)).toBeUndefined();
      expect(await s.merchants.resolve(key.secret)).toBeUndefined();
    });

    test('test cards are the sandbox\'s: their behaviour by merchant and number, and whether a number is any sandbox\'s', async () => {
      const s = store();
      const merchant = aMerchant();
      const number = `4000${Date.now().toString().slice(-8)}0002`;
      await s.merchants.insertWithCredentials(merchant, [anApiKey()], [], [{ number, brand: 'visa', behaviour: 'soft_decline', description: 'declined softly' }]);
      expect(await s.merchants.behaviourOf(merchant.id, number)).toBe('soft_decline');
      expect(await s.merchants.behaviourOf('mer_other', number)).toBeUndefined();
      expect(await s.merchants.isTestCard(number)).toBe(true);
      expect(await s.merchants.isTestCard('4000000000000000')).toBe(false);
    });
  });
}
