import { NO_MERCHANT_EVIDENCE, serviceEvidence, type Evidence } from '../domain/evidence.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import type { EvidenceRepository } from '../ports/evidence-repository.port.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';

/** The order's evidence as it stands: the merchant's (as last merged) and what the service knows of its payment. */
export async function evidenceOf(reads: { readonly evidence: EvidenceRepository; readonly payments: PaymentRepository }, order: Order): Promise<Evidence> {
  const stored = await reads.evidence.find(order.id);
  const paid = (await reads.payments.listForOrder(order.id)).find((p) => p.payment.status === 'succeeded');
  return { orderId: order.id, merchant: stored?.evidence ?? NO_MERCHANT_EVIDENCE, service: serviceEvidence(order, paid), updatedAt: stored?.updatedAt ?? null };
}
