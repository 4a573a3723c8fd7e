import { PostgresCustomerRepository } from './adapters/postgres/postgres-customer-repository.ts';
import { PostgresCardVault, PostgresVaultKeys } from './adapters/postgres/postgres-card-vault.ts';
import { CUSTOMER_ERRORS } from './errors.ts';
import type { CustomerScope } from './ports/customer-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { createCardVaultUseCases, type CardVaultDeps, type CardVaultUseCases } from './application/card-vault-use-cases.ts';
import { createPrepareOrderCharge, type PrepareOrderCharge } from './application/charge-saved-card.ts';
import { createRotateVaultKeys, type RotateVaultKeys } from './application/rotate-vault-keys.ts';
import { createCustomerService } from './application/customer-service.ts';
import type { CardVault } from './ports/card-vault.port.ts';
import type { CustomerRepository } from './ports/customer-repository.port.ts';
import type { PayOrder } from '../payment/application/pay-order.ts';
import { CustomerService } from '../../gen/checkout/v1/customer_pb.ts';
import type { KeyRing } from '../../kernel/ports/key-ring.port.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { CUSTOMER_ID_PREFIX } from './domain/customer.entity.ts';
import { CARD_ID_PREFIX } from './domain/saved-card.ts';

/** The customer module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const CUSTOMER_MODULE = {
  name: 'customer',
  postgresObjectTables: [[CUSTOMER_ID_PREFIX, 'customers'], [CARD_ID_PREFIX, 'vault_cards']],
  postgresScope: (db): CustomerScope => ({ customers: new PostgresCustomerRepository(db), vault: new PostgresCardVault(db) }),
  errors: CUSTOMER_ERRORS,
} satisfies ModuleManifest;

/** The customer module wired: customers, the card vault and its key rotation, CustomerService. */
export interface CustomerWiring extends ModuleWiring {
  readonly vault: CardVaultUseCases;
  /** The vault's sealed cards, read outside a transaction. */
  readonly cards: CardVault;
  readonly customers: CustomerRepository;
  /** Re-wraps the vault's data keys under the active KEK (`checkout keys rotate`). */
  readonly rotateVaultKeys: RotateVaultKeys;
  /** An order's charge of a saved card, once the payment engine is there to pay it. */
  readonly prepareChargeWith: (payOrder: PayOrder) => PrepareOrderCharge;
}

/**
 * Wires the customer module over Postgres. The vault verifies cards on the payment engine's
 * routes (read when it verifies one, so the engine may be wired after it); the engine saves a
 * paying card through the vault's saving.
 */
export function wireCustomer(context: ModuleContext, deps: { readonly keyRing: KeyRing } & Pick<CardVaultDeps, 'routesIn' | 'testCards'>): CustomerWiring {
  const { knex, ids, clock } = context;
  const cards = new PostgresCardVault(knex);
  const customers = new PostgresCustomerRepository(knex);
  const vault = createCardVaultUseCases({ keys: deps.keyRing, reads: cards, routesIn: deps.routesIn, testCards: deps.testCards, onBackgroundError: context.onInternalError, ids, clock });
  const service = createCustomerService({ authenticate: context.authenticate, idempotent: context.idempotent, customers, cards, vault, ids, clock });
  return {
    // CreateCardToken takes a publishable key; the service judges each call's key itself.
    services: [connectService(CustomerService, service, 'publishable')],
    vault,
    cards,
    customers,
    rotateVaultKeys: createRotateVaultKeys({ keys: deps.keyRing, store: new PostgresVaultKeys(knex) }),
    prepareChargeWith: (payOrder) => createPrepareOrderCharge({ customers, vault, payOrder }),
  };
}
