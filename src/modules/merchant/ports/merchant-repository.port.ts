import type { SealedSecret } from '../../../kernel/ports/key-ring.port.ts';
import type { KeyKind } from '../domain/api-key.ts';
import type { PaymentMethod } from '../../payment/domain/payment-attempt.entity.ts';
import type { TestCard } from '../../payment/domain/test-card.ts';

/** A merchant account as stored. */
export interface MerchantRecord {
  readonly id: string;
  readonly name: string;
  readonly checkoutHost: string;
  readonly settlementCurrency: string;
  /** Methods switched on for the merchant's checkout. */
  readonly paymentMethods: readonly PaymentMethod[];
  readonly createdAt: Date;
}

/** An API key to store; the store keeps only a hash of secret. */
export interface NewApiKey {
  readonly id: string;
  readonly kind: KeyKind;
  readonly livemode: boolean;
  readonly secret: string;
}

/** A webhook signing secret for one mode, sealed for its default endpoint (defaultEndpointId). */
export interface NewWebhookSecret {
  readonly livemode: boolean;
  readonly secret: SealedSecret;
}

/** Reads merchants. */
export interface MerchantReader {
  /** The merchant, or undefined. */
  findById(merchantId: string): Promise<MerchantRecord | undefined>;
}

/** Stores merchants and their credentials. */
export interface MerchantRepository extends MerchantReader {
  /**
   * Stores a merchant with its keys and webhook secrets, in one transaction.
   * With onlyIfNoMerchants, stores nothing (and answers false) when any
   * merchant exists; concurrent callers are serialised so exactly one wins.
   */
  insertWithCredentials(
    merchant: MerchantRecord,
    keys: readonly NewApiKey[],
    webhookSecrets: readonly NewWebhookSecret[],
    testCards: readonly TestCard[],
    options?: { readonly onlyIfNoMerchants?: boolean },
  ): Promise<boolean>;
  /** Stores further API keys of an existing merchant; false (and nothing stored) when there is no such merchant. */
  addApiKeys(merchantId: string, keys: readonly NewApiKey[], createdAt: Date): Promise<boolean>;
  /** Marks an API key revoked; it answers 401 from then on. */
  revokeKey(keyId: string): Promise<void>;
}
