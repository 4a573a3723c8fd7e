import type { Order } from '../../order/domain/order.entity.ts';
import type { Metrics } from '../../../kernel/ports/metrics.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { assertWithinVelocity, velocityAddress, velocityScore, type AttemptTally, type VelocityLimits } from '../domain/velocity.ts';
import type { PaymentClient, PaymentInstrument } from './payment-instrument.ts';

/**
 * A merchant's submissions are serialised once fewer points than this remain
 * in its window: more than the submissions one instance's connection pool can
 * have in flight at once, at a decline's weight, could spend.
 */
export const MERCHANT_LOCK_MARGIN = 200;

/**
 * Refuses, in the transaction that reserves a payment, a submission beyond the card-testing limits
 * of its client address or its merchant.
 * @throws DomainError checkout.velocity_limited
 */
export type CheckVelocity = (tx: TransactionScope, order: Order, client: PaymentClient, instrument: PaymentInstrument) => Promise<void>;

/** Builds the card-testing check over its limits; each refusal is counted in the metrics. */
export function createCheckVelocity(deps: { readonly velocity: VelocityLimits; readonly clock: Clock; readonly metrics?: Pick<Metrics, 'rateLimitRefused'> | undefined }): CheckVelocity {
  return async (tx, order, client, instrument) => {
    const { perClientAddress, perMerchant, windowMs, declineWeight } = deps.velocity;
    if (perClientAddress <= 0 && perMerchant <= 0) return;
    // A merchant charging a card it vaulted (verified when saved), with no customer present, is not card testing.
    if (instrument.method === 'card' && instrument.saved?.offSession) return;
    const since = new Date(deps.clock.now().getTime() - windowMs);
    let clientAddress: AttemptTally | undefined;
    if (perClientAddress > 0 && client.address) {
      // Submissions of one address, serialised, each see the attempts committed before them.
      const scope = { clientAddress: velocityAddress(client.address) };
      await tx.payments.serialiseTally(scope);
      clientAddress = await tx.payments.tally(scope, since);
    }
    let merchant: AttemptTally = { attempts: 0, declines: 0 };
    if (perMerchant > 0) {
      const scope = { merchantId: order.merchantId, livemode: order.livemode };
      merchant = await tx.payments.tally(scope, since);
      if (perMerchant - velocityScore(merchant, declineWeight) <= MERCHANT_LOCK_MARGIN) {
        await tx.payments.serialiseTally(scope);
        merchant = await tx.payments.tally(scope, since);
      }
    }
    try {
      assertWithinVelocity(deps.velocity, { clientAddress, merchant });
    } catch (err) {
      deps.metrics?.rateLimitRefused('card_velocity');
      throw err;
    }
  };
}
