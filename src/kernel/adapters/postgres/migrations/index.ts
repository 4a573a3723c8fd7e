import type { Knex } from 'knex';
import * as initial from './001-initial.ts';
import * as checkout from './002-checkout.ts';
import * as webhooks from './003-webhooks.ts';
import * as deliveryFairness from './004-delivery-fairness.ts';
import * as paymentSafety from './005-payment-safety.ts';
import * as installation from './006-installation.ts';
import * as eventSubjects from './007-event-subjects.ts';
import * as payments from './008-payments.ts';
import * as ledger from './009-ledger.ts';
import * as refunds from './010-refunds.ts';
import * as settlement from './011-settlement.ts';
import * as payouts from './012-payouts.ts';
import * as manualCapture from './013-manual-capture.ts';
import * as disputes from './014-disputes.ts';
import * as ledgerSealed from './015-ledger-sealed.ts';
import * as captureRequests from './016-capture-requests.ts';
import * as paymentLinks from './017-payment-links.ts';
import * as customersVault from './018-customers-vault.ts';
import * as subscriptions from './019-subscriptions.ts';
import * as eventOrder from './020-event-order.ts';
import * as clientSecrets from './021-client-secrets.ts';
import * as ledgerBalanceShards from './022-ledger-balance-shards.ts';
import * as ledgerCheckCustomPlans from './023-ledger-check-custom-plans.ts';
import * as testClockAdvances from './024-test-clock-advances.ts';
import * as authFailures from './025-auth-failures.ts';
import * as heldCardPayment from './026-held-card-payment.ts';
import { webhookSecretsSealed } from './027-webhook-secrets-sealed.ts';
import * as eventStream from './028-event-stream.ts';
import * as paymentRoutes from './029-payment-routes.ts';
import * as challengeRedirect from './030-challenge-redirect.ts';
import type { KeyRing } from '../../../ports/key-ring.port.ts';

/** Every migration, in order. Add new ones at the end; never edit a landed one. */
export const MIGRATIONS: Array<readonly [string, Knex.Migration]> = [
  ['001-initial', initial],
  ['002-checkout', checkout],
  ['003-webhooks', webhooks],
  ['004-delivery-fairness', deliveryFairness],
  ['005-payment-safety', paymentSafety],
  ['006-installation', installation],
  ['007-event-subjects', eventSubjects],
  ['008-payments', payments],
  ['009-ledger', ledger],
  ['010-refunds', refunds],
  ['011-settlement', settlement],
  ['012-payouts', payouts],
  ['013-manual-capture', manualCapture],
  ['014-disputes', disputes],
  ['015-ledger-sealed', ledgerSealed],
  ['016-capture-requests', captureRequests],
  ['017-payment-links', paymentLinks],
  ['018-customers-vault', customersVault],
  ['019-subscriptions', subscriptions],
  ['020-event-order', eventOrder],
  ['021-client-secrets', clientSecrets],
  ['022-ledger-balance-shards', ledgerBalanceShards],
  ['023-ledger-check-custom-plans', ledgerCheckCustomPlans],
  ['024-test-clock-advances', testClockAdvances],
  ['025-auth-failures', authFailures],
  ['026-held-card-payment', heldCardPayment],
  // Its work needs the vault's keys: migrationSourceFor hands them over (without them it seals nothing, and refuses a table with rows).
  ['027-webhook-secrets-sealed', webhookSecretsSealed(undefined)],
  ['028-event-stream', eventStream],
  ['029-payment-routes', paymentRoutes],
  ['030-challenge-redirect', challengeRedirect],
];

/** What a migration's work may need beyond the database: the vault's keys (027 seals with them). */
export interface MigrationContext {
  readonly keyRing?: KeyRing | undefined;
}

/** The migrations whose work needs the context, built from it by name. */
const WITH_CONTEXT: Readonly<Record<string, (context: MigrationContext) => Knex.Migration>> = {
  '027-webhook-secrets-sealed': (context) => webhookSecretsSealed(context.keyRing),
};

/**
 * Knex migration source over statically imported TypeScript modules, so
 * migrations run the same under `npm start`, `npm run migrate` and vitest;
 * the context reaches the migrations that need it.
 */
export function migrationSourceFor(context: MigrationContext): Knex.MigrationSource<readonly [string, Knex.Migration]> {
  return {
    getMigrations: async () => MIGRATIONS,
    getMigrationName: (migration) => migration[0],
    getMigration: async ([name, migration]) => WITH_CONTEXT[name]?.(context) ?? migration,
  };
}

/** The migration source without a context (what a Knex instance is created with). */
export const migrationSource = migrationSourceFor({});
