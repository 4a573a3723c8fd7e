import type { MerchantEvidence } from '../domain/evidence.ts';

/** The merchant's evidence of each order, as last merged. */
export interface EvidenceRepository {
  /** The order's evidence and when it last changed; undefined when none was ever attached. */
  find(orderId: string): Promise<{ evidence: MerchantEvidence; updatedAt: Date } | undefined>;
  /** The order's evidence, locked until the transaction ends (undefined when none yet). */
  lock(orderId: string): Promise<{ evidence: MerchantEvidence; updatedAt: Date } | undefined>;
  /** Stores the order's evidence in full (inserted or replaced). */
  save(order: { readonly id: string; readonly merchantId: string; readonly livemode: boolean }, evidence: MerchantEvidence, now: Date): Promise<void>;
}
