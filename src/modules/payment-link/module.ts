import { PostgresPaymentLinkRepository } from './adapters/postgres/postgres-payment-link-repository.ts';
import { PAYMENT_LINK_ERRORS } from './errors.ts';
import type { PaymentLinkScope } from './ports/payment-link-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The payment link module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const PAYMENT_LINK_MODULE = {
  name: 'payment-link',
  postgresScope: (db): PaymentLinkScope => ({ links: new PostgresPaymentLinkRepository(db) }),
  errors: PAYMENT_LINK_ERRORS,
} satisfies ModuleManifest;
