import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { paymentLinkStatus, type PaymentLink } from './payment-link.entity.ts';

/**
 * Whether a payment may start on an order of this link, judged under the link's row lock in the
 * transaction that starts it. A deactivated or expired link takes no payment; a single-use link
 * none once paid, nor while another of its orders has a payment under way (that payment holds the
 * link's one completion until it fails, is declined or its order expires).
 * @throws DomainError checkout.link_inactive or checkout.link_used
 */
export function assertLinkTakesPayment(link: PaymentLink, othersInFlight: boolean, now: Date): void {
  const status = paymentLinkStatus(link, now);
  if (status === 'deactivated' || status === 'expired') {
    throw new DomainError('checkout.link_inactive', `This payment link is ${status}: it takes no more payments.`);
  }
  if (status === 'completed') {
    throw new DomainError('checkout.link_used', 'This single-use payment link has just been paid by someone else. You have not been charged.');
  }
  if (link.type === 'single_use' && othersInFlight) {
    throw new DomainError('checkout.link_used', 'This single-use payment link is being paid by someone else right now. You have not been charged.');
  }
}
