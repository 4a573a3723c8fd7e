import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import type { ModuleManifest } from '../kernel/module-manifest.ts';
import { ERRORS, MODULES, OBJECT_TABLES, postgresScope } from './modules.ts';

const manifests: readonly ModuleManifest[] = MODULES;

/** The names each module contributes, and the modules that contribute each name more than once. */
function claimedTwice(partsOf: (module: ModuleManifest) => readonly string[]): Record<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const module of manifests) for (const name of partsOf(module)) owners.set(name, [...(owners.get(name) ?? []), module.name]);
  return Object.fromEntries([...owners].filter(([, by]) => by.length > 1));
}

describe('the module list', () => {
  it('names each module by its folder, once', () => {
    const names = manifests.map((module) => module.name);
    expect(new Set(names).size).toBe(names.length);
    const missing = names.filter((name) => name !== 'kernel' && !existsSync(path.join(import.meta.dirname, '..', 'modules', name)));
    expect(missing).toEqual([]);
  });

  it('has each error code mapped by one module only (a second mapping would silently win)', () => {
    expect(claimedTwice((module) => Object.keys(module.errors ?? {}))).toEqual({});
  });

  it('has each repository of the transaction built by one module only, and the scope holds them all', () => {
    const db = {} as Knex;
    expect(claimedTwice((module) => Object.keys(module.postgresScope?.(db) ?? {}))).toEqual({});
    const scope = postgresScope(db);
    const built = manifests.flatMap((module) => Object.keys(module.postgresScope?.(db) ?? {}));
    expect(Object.keys(scope).sort()).toEqual(built.sort());
    expect(built).toEqual(expect.arrayContaining(['orders', 'payments', 'refunds', 'requests', 'outbox', 'ledger']));
  });

  it('composes the error table from every module\'s part', () => {
    const parts = manifests.reduce((count, module) => count + Object.keys(module.errors ?? {}).length, 0);
    expect(Object.keys(ERRORS)).toHaveLength(parts);
    expect(ERRORS['refund.exceeds_remaining'].publicCode).toBe('refund_exceeds_remaining');
    expect(ERRORS['auth.key_invalid'].publicCode).toBe('api_key_invalid');
  });

  it('knows the table of every kind of object a call names by id, each prefix once, for the other-mode hint', () => {
    const prefixes = OBJECT_TABLES.map(([prefix]) => prefix);
    expect(new Set(prefixes).size).toBe(prefixes.length);
    expect(Object.fromEntries(OBJECT_TABLES)).toEqual({
      ord_: 'orders', re_: 'refunds', dp_: 'disputes', plink_: 'payment_links', evt_: 'events', we_: 'webhook_endpoints',
      cus_: 'customers', card_: 'vault_cards', sub_: 'subscriptions', po_: 'payouts', pay_: 'payments', att_: 'payment_attempts',
    });
  });
});
