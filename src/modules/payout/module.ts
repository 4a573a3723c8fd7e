import { PostgresPayoutRepository } from './adapters/postgres/postgres-payouts.ts';
import { PAYOUT_ERRORS } from './errors.ts';
import type { PayoutScope } from './ports/payout-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { PostgresSettlement } from './adapters/postgres/postgres-settlement.ts';
import { PostgresPayoutBatcher, PostgresPayoutReader } from './adapters/postgres/postgres-payouts.ts';
import { createSettleDue } from './application/settle-due.ts';
import { createPayoutRuns, type PayoutRuns } from './application/run-payouts.ts';
import { createPayoutService } from './application/payout-service.ts';
import { createBalanceService } from './application/balance-service.ts';
import type { LedgerAudit } from '../ledger/ports/ledger.port.ts';
import { PayoutService } from '../../gen/checkout/v1/payout_pb.ts';
import { BalanceService } from '../../gen/checkout/v1/balance_pb.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { PAYOUT_ID_PREFIX } from './domain/payout.entity.ts';

/** The payout module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const PAYOUT_MODULE = {
  name: 'payout',
  postgresObjectTables: [[PAYOUT_ID_PREFIX, 'payouts']],
  postgresScope: (db): PayoutScope => ({ payouts: new PostgresPayoutRepository(db) }),
  errors: PAYOUT_ERRORS,
} satisfies ModuleManifest;

/** The payout module wired: PayoutService and BalanceService, and the settlement and payout runs of the settler worker. */
export interface PayoutWiring extends ModuleWiring {
  readonly payoutRuns: PayoutRuns;
}

/** Wires the payout module over Postgres and the ledger's reads. */
export function wirePayout(context: ModuleContext, deps: { readonly ledger: LedgerAudit; /** The daily payout cut-off, minutes after midnight UTC (midnight when absent). */ readonly cutoffMinutesUtc?: number }): PayoutWiring {
  const { knex, clock, ids } = context;
  const reader = new PostgresPayoutReader(knex);
  const payoutRuns = createPayoutRuns({
    uow: context.uow,
    batcher: new PostgresPayoutBatcher(knex),
    reader,
    settleDue: createSettleDue({ settlement: new PostgresSettlement(knex), clock }),
    clock,
    ids,
    cutoffMinutesUtc: deps.cutoffMinutesUtc ?? 0,
  });
  return {
    services: [
      connectService(PayoutService, createPayoutService({ authenticate: context.authenticate, payouts: reader }), 'secret'),
      connectService(BalanceService, createBalanceService({ authenticate: context.authenticate, ledger: deps.ledger }), 'secret'),
    ],
    payoutRuns,
  };
}
