import { PostgresPaymentRepository } from './adapters/postgres/postgres-payment-repository.ts';
import { PAYMENT_ERRORS } from './errors.ts';
import type { PaymentScope } from './ports/payment-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The payment module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const PAYMENT_MODULE = {
  name: 'payment',
  postgresScope: (db): PaymentScope => ({ payments: new PostgresPaymentRepository(db) }),
  errors: PAYMENT_ERRORS,
} satisfies ModuleManifest;
