// Webhook endpoint rules that need no delivery: the subscription list, the default endpoint, and the
// signing secrets sealed at rest (migration 027, rotation).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { startTestService, type TestService } from './support/service.ts';
import { createTestDatabase } from './support/database.ts';
import { MIGRATIONS, migrationSourceFor } from '../src/kernel/adapters/postgres/migrations/index.ts';
import { createAesGcmKeyRing } from '../src/kernel/adapters/crypto/aes-gcm-key-ring.ts';
import { PostgresWebhookEndpointRepository } from '../src/modules/webhook/adapters/postgres/postgres-webhook-endpoint-repository.ts';
import { PostgresVaultKeys } from '../src/modules/customer/adapters/postgres/postgres-card-vault.ts';
import { createSigningSecrets } from '../src/modules/webhook/application/signing-secrets.ts';
import { createRotateVaultKeys } from '../src/modules/customer/application/rotate-vault-keys.ts';
import type { KeyRing } from '../src/kernel/ports/key-ring.port.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  // Endpoints point at loopback (port 9, discard), so the suite registers no other host.
  svc = await startTestService({ webhookAllowPrivateNetworks: true });
  shop = await svc.sandbox('Endpoints shop');
});
afterAll(async () => {
  await svc?.close();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) =>
  svc.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${shop.test_secret_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });

describe('webhook endpoints', () => {
  it('refuses an empty enabled_events on create, and subscribes to everything when it is left out', async () => {
    const empty = await call('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', enabled_events: [] });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error).toMatchObject({ code: 'enabled_events_invalid', param: 'enabled_events' });
    const all = await call('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks' });
    expect(all.statusCode).toBe(201);
    expect(all.json().enabled_events).toEqual(['*']);
  });

  it('keeps the default endpoint: DELETE is refused with a way out, and it stays listed', async () => {
    const listed = (await call('GET', '/v1/webhook_endpoints')).json().data as { id: string; is_default: boolean }[];
    const fallback = listed.find((e) => e.is_default)!;
    const refused = await call('DELETE', `/v1/webhook_endpoints/${fallback.id}`);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error).toMatchObject({ code: 'default_endpoint_protected', message: expect.stringMatching(/disabled/) });
    expect((await call('GET', `/v1/webhook_endpoints/${fallback.id}`)).statusCode).toBe(200);
  });
});

describe('request bodies the gateway reads for the core', () => {
  it('says why a body with a __proto__ key is refused, and shows an amount that overflowed as such', async () => {
    const proto = await call('POST', '/v1/orders', JSON.parse('{"__proto__":{"admin":true},"amount":100}'));
    expect(proto.statusCode).toBe(400);
    const raw = await svc.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' },
      payload: '{"__proto__":{"admin":true},"amount":100,"currency":"EUR","reference":"r"}',
    });
    expect(raw.json().error).toMatchObject({ code: 'invalid_json', message: expect.stringMatching(/__proto__/) });
    const huge = await svc.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' },
      payload: '{"amount":1e400,"currency":"EUR","reference":"r"}',
    });
    expect(huge.json().error).toMatchObject({ code: 'parameter_invalid_integer', message: expect.stringMatching(/Infinity is not/) });
  });

  it('answers a checkout id too long to be one with the HTML not-found page', async () => {
    const res = await svc.app.inject({ method: 'GET', url: `/c/${'x'.repeat(150)}` });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  });
});

describe('signing secrets sealed at rest', () => {
  it('answers a new secret once and keeps it only sealed: the row holds no whsec_, a repeat under the key answers it again', async () => {
    const created = await svc.app.inject({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', 'idempotency-key': 'sealed-create' },
      payload: JSON.stringify({ url: 'http://127.0.0.1:9/sealed' }),
    });
    expect(created.statusCode, created.body).toBe(201);
    const { id, secret } = created.json() as { id: string; secret: string };
    const row = await svc.db.knex('webhook_endpoint_secrets').where({ endpoint_id: id }).first();
    expect(row.secret).toBeNull();
    expect(row.kek_id).toEqual(expect.any(String));
    expect(Buffer.from(row.ciphertext).toString('latin1')).not.toContain(secret.slice('whsec_'.length));
    const kept = JSON.stringify(await svc.db.knex('idempotency_keys').where({ key: 'sealed-create' }).first());
    expect(kept).not.toContain('whsec_');
    const repeat = await svc.app.inject({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', 'idempotency-key': 'sealed-create' },
      payload: JSON.stringify({ url: 'http://127.0.0.1:9/sealed' }),
    });
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.json()).toMatchObject({ id, secret });
  });

  it('migration 027 seals the secrets an earlier release kept in clear, which go on signing; rotation seals a straggler; the down migration opens them again', async () => {
    const db = await createTestDatabase({ migrate: false });
    const { knex } = db;
    try {
      const keys = createAesGcmKeyRing({ keys: [{ id: 'k2026', secret: randomBytes(32) }], configured: true });
      const through = (last: string, keyRing?: KeyRing) => ({
        ...migrationSourceFor({ keyRing }),
        getMigrations: async () => MIGRATIONS.slice(0, MIGRATIONS.findIndex(([name]) => name === last) + 1),
      });
      await knex.migrate.latest({ migrationSource: through('026-held-card-payment') });
      const t = new Date();
      await knex('merchants').insert({ id: 'mer_m', name: 'M', checkout_host: 'http://pay.test', settlement_currency: 'EUR', created_at: t });
      await knex('webhook_endpoints').insert({ id: 'we_m', merchant_id: 'mer_m', livemode: false, url: 'https://m.example/hooks', enabled_events: ['*'], created_at: t, updated_at: t });
      await knex('webhook_endpoint_secrets').insert([
        { endpoint_id: 'we_m', secret: 'whsec_oldoldoldoldoldoldoldoldoldoldol', created_at: t, expires_at: new Date(t.getTime() + 3600_000) },
        { endpoint_id: 'we_m', secret: 'whsec_newnewnewnewnewnewnewnewnewnewne', created_at: t },
      ]);

      // Without the vault's keys it changes nothing, and says how to run it.
      await expect(knex.migrate.latest({ migrationSource: through('027-webhook-secrets-sealed') })).rejects.toThrow(/seals 2 webhook signing secrets.*checkout migrate/);
      expect(await knex('webhook_endpoint_secrets').whereNotNull('secret')).toHaveLength(2);
      expect(await knex.schema.hasColumn('webhook_endpoint_secrets', 'ciphertext')).toBe(false);

      await knex.migrate.latest({ migrationSource: through('027-webhook-secrets-sealed', keys) });
      const rows = await knex('webhook_endpoint_secrets').orderBy('id');
      expect(rows.map((r) => [r.secret, r.kek_id])).toEqual([
        [null, 'k2026'],
        [null, 'k2026'],
      ]);
      expect(JSON.stringify(rows)).not.toContain('whsec_');
      const endpoints = new PostgresWebhookEndpointRepository(knex);
      const open = (records: Awaited<ReturnType<typeof endpoints.activeSecrets>>) => createSigningSecrets(keys).open(records, 'we_m');
      expect(open(await endpoints.activeSecrets('we_m', new Date()))).toEqual(['whsec_newnewnewnewnewnewnewnewnewnewne', 'whsec_oldoldoldoldoldoldoldoldoldoldol']);
      // A ciphertext moved onto another endpoint does not open (the endpoint's id is bound to it).
      expect(() => createSigningSecrets(keys).open([{ id: rows[0].id, sealed: { kekId: rows[0].kek_id, wrappedKey: rows[0].wrapped_key, ciphertext: rows[0].ciphertext } }], 'we_other')).toThrow();
      // Neither form, or both, is refused.
      await expect(knex('webhook_endpoint_secrets').insert({ endpoint_id: 'we_m', secret: null, created_at: t })).rejects.toThrow(/webhook_endpoint_secrets_one_form/);

      // A process of the earlier release, still running, writes a secret in clear: it still signs, and the rotation seals it.
      await knex('webhook_endpoint_secrets').insert({ endpoint_id: 'we_m', secret: 'whsec_straggstraggstraggstraggstragg', created_at: t });
      expect(open(await endpoints.activeSecrets('we_m', new Date()))[0]).toBe('whsec_straggstraggstraggstraggstragg');
      const report = await createRotateVaultKeys({ keys, store: new PostgresVaultKeys(knex) })();
      expect(report.sealed).toBe(1);
      expect(report.after).toEqual({ k2026: 3 });
      expect(await knex('webhook_endpoint_secrets').whereNotNull('secret')).toHaveLength(0);
      expect(open(await endpoints.activeSecrets('we_m', new Date()))[0]).toBe('whsec_straggstraggstraggstraggstragg');

      // Rolling back: without the keys refused; with them every secret is in clear again, as the earlier release reads it.
      await expect(knex.migrate.down({ migrationSource: through('027-webhook-secrets-sealed') })).rejects.toThrow(/needs the vault's keys/);
      await knex.migrate.down({ migrationSource: through('027-webhook-secrets-sealed', keys) });
      expect(await knex.schema.hasColumn('webhook_endpoint_secrets', 'ciphertext')).toBe(false);
      expect((await knex('webhook_endpoint_secrets').orderBy('id')).map((r) => r.secret)).toEqual([
        'whsec_oldoldoldoldoldoldoldoldoldoldol',
        'whsec_newnewnewnewnewnewnewnewnewnewne',
        'whsec_straggstraggstraggstraggstragg',
      ]);
    } finally {
      await db.drop();
    }
  });
});
