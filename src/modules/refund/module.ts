import { PostgresRefundRepository } from './adapters/postgres/postgres-refund-repository.ts';
import { REFUND_ERRORS } from './errors.ts';
import type { RefundScope } from './ports/refund-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { createRefundOrder, type RefundOrder, type RefundOrderDeps } from './application/refund-order.ts';
import { createRefundService } from './application/refund-service.ts';
import type { RefundRepository } from './ports/refund-repository.port.ts';
import type { PaymentRepository } from '../payment/ports/payment-repository.port.ts';
import { RefundService } from '../../gen/checkout/v1/refund_pb.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { REFUND_ID_PREFIX } from './domain/refund.entity.ts';

/** The refund module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const REFUND_MODULE = {
  name: 'refund',
  postgresObjectTables: [[REFUND_ID_PREFIX, 'refunds']],
  postgresScope: (db): RefundScope => ({ refunds: new PostgresRefundRepository(db) }),
  errors: REFUND_ERRORS,
} satisfies ModuleManifest;

/** The refund module wired: RefundService, its use case (whose stale refunds the sweeper settles), its reads. */
export interface RefundWiring extends ModuleWiring {
  readonly refundOrder: RefundOrder;
  /** Refunds, read outside a transaction (an order's view lists them). */
  readonly reads: RefundRepository;
}

/** Wires the refund module over the payment engine's parts and Postgres. */
export function wireRefund(context: ModuleContext, deps: { readonly parts: RefundOrderDeps; readonly payments: PaymentRepository }): RefundWiring {
  const reads = new PostgresRefundRepository(context.knex);
  const refundOrder = createRefundOrder(deps.parts, { refunds: reads });
  const service = createRefundService({ authenticate: context.authenticate, idempotent: context.idempotent, refunds: refundOrder, payments: deps.payments });
  return { services: [connectService(RefundService, service, 'secret')], refundOrder, reads };
}
