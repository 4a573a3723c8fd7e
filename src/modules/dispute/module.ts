import { PostgresDisputeRepository } from './adapters/postgres/postgres-dispute-repository.ts';
import { PostgresEvidenceRepository } from './adapters/postgres/postgres-evidence-repository.ts';
import { DISPUTE_ERRORS } from './errors.ts';
import type { DisputeScope } from './ports/dispute-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { createOpenDispute, type OpenDisputeIn } from './application/open-dispute.ts';
import { createSweepDisputes, type SweepDisputes } from './application/sweep-disputes.ts';
import { createDisputeService } from './application/dispute-service.ts';
import type { DisputeRepository } from './ports/dispute-repository.port.ts';
import type { PaymentParts } from '../payment/application/payments.ts';
import type { PaymentRepository } from '../payment/ports/payment-repository.port.ts';
import type { OrderRepository } from '../order/ports/order-repository.port.ts';
import { EVENT_ID_PREFIX } from '../event/domain/domain-event.ts';
import { DisputeService } from '../../gen/checkout/v1/dispute_pb.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { DISPUTE_ID_PREFIX } from './domain/dispute.entity.ts';

/** The dispute module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const DISPUTE_MODULE = {
  name: 'dispute',
  postgresObjectTables: [[DISPUTE_ID_PREFIX, 'disputes']],
  postgresScope: (db): DisputeScope => ({ disputes: new PostgresDisputeRepository(db), evidence: new PostgresEvidenceRepository(db) }),
  errors: DISPUTE_ERRORS,
} satisfies ModuleManifest;

/** The dispute module wired: DisputeService, the sweeper's housekeeping, the opening of a dispute (the test helpers'), its reads. */
export interface DisputeWiring extends ModuleWiring {
  /** The dispute test card's disputes, overdue and decided ones, for the sweeper. */
  readonly sweep: SweepDisputes;
  readonly openDispute: OpenDisputeIn;
  /** Disputes, read outside a transaction (an order's view lists them). */
  readonly reads: DisputeRepository;
}

/** Wires the dispute module over the payment engine's parts and Postgres. */
export function wireDispute(context: ModuleContext, deps: { readonly parts: PaymentParts; readonly orders: OrderRepository; readonly payments: PaymentRepository }): DisputeWiring {
  const { knex, ids, clock } = context;
  const reads = new PostgresDisputeRepository(knex);
  const openDispute = createOpenDispute(deps.parts);
  const service = createDisputeService({
    authenticate: context.authenticate,
    idempotent: context.idempotent,
    reads: { disputes: reads, evidence: new PostgresEvidenceRepository(knex), orders: deps.orders, payments: deps.payments },
    clock,
    eventIds: () => ({ eventId: ids.newId(EVENT_ID_PREFIX), now: clock.now() }),
  });
  return { services: [connectService(DisputeService, service, 'secret')], sweep: createSweepDisputes(deps.parts, { disputes: reads }, openDispute), openDispute, reads };
}
