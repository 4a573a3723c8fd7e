import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { PaymentLinkStatus, PaymentLinkType, type PaymentLink } from '../../../src/gen/checkout/v1/payment_link_pb.ts';

/** A payment link as the REST API shows it: snake_case, amounts as JSON integers. */
export interface PaymentLinkJson {
  id: string;
  object: 'payment_link';
  url: string;
  type: 'single_use' | 'collecting';
  status: string;
  active: boolean;
  amount: number;
  currency: string;
  reference: string;
  line_items: { name: string; amount: number }[];
  return_url: string | null;
  expires_at: string | null;
  completed_payments: number;
  deactivated_at: string | null;
  created: string;
  livemode: boolean;
}

type KnownStatus = (typeof PaymentLinkStatus)[Exclude<keyof typeof PaymentLinkStatus, 'UNSPECIFIED'>];

/** REST spelling of each link status; a status missing here fails the typecheck. */
const STATUS_JSON: { readonly [S in KnownStatus]: string } = {
  [PaymentLinkStatus.ACTIVE]: 'active',
  [PaymentLinkStatus.DEACTIVATED]: 'deactivated',
  [PaymentLinkStatus.EXPIRED]: 'expired',
  [PaymentLinkStatus.COMPLETED]: 'completed',
};

const isoOf = (ts: Timestamp | undefined) => (ts ? timestampDate(ts).toISOString() : null);

/**
 * Maps the proto link to its REST JSON, field by field.
 * @throws Error for a status this gateway does not know (an older gateway before a newer core).
 */
export function paymentLinkJson(link: PaymentLink): PaymentLinkJson {
  const status = STATUS_JSON[link.status as KnownStatus];
  if (status === undefined) throw new Error(`unknown payment link status ${link.status}`);
  return {
    id: link.id,
    object: 'payment_link',
    url: link.url,
    type: link.type === PaymentLinkType.SINGLE_USE ? 'single_use' : 'collecting',
    status,
    active: link.active,
    amount: Number(link.amount),
    currency: link.currency,
    reference: link.reference,
    line_items: link.lineItems.map((item) => ({ name: item.name, amount: Number(item.amount) })),
    return_url: link.returnUrl ?? null,
    expires_at: isoOf(link.expiresAt),
    completed_payments: Number(link.completedPayments),
    deactivated_at: isoOf(link.deactivatedAt),
    created: isoOf(link.created) ?? '',
    livemode: link.livemode,
  };
}
