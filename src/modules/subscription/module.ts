import { PostgresSubscriptionRepository, PostgresTestClockRepository } from './adapters/postgres/postgres-subscriptions.ts';
import { SUBSCRIPTION_ERRORS } from './errors.ts';
import type { SubscriptionScope } from './ports/subscription-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The subscription module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const SUBSCRIPTION_MODULE = {
  name: 'subscription',
  postgresScope: (db): SubscriptionScope => ({ subscriptions: new PostgresSubscriptionRepository(db), testClocks: new PostgresTestClockRepository(db) }),
  errors: SUBSCRIPTION_ERRORS,
} satisfies ModuleManifest;
