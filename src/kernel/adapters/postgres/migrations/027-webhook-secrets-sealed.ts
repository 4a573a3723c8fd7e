import type { Knex } from 'knex';
import type { KeyRing } from '../../../ports/key-ring.port.ts';

/**
 * Webhook signing secrets sealed at rest (issue 19.7). Until now `webhook_endpoint_secrets.secret`
 * held every whsec_… in clear: whoever read the database could sign webhooks for every merchant.
 * Each secret is now sealed as a vaulted card is (docs/recurring.md, "Envelope encryption"): its own
 * data key, wrapped by the vault's active KEK (`kek_id`, `wrapped_key`), the endpoint's id as the
 * associated data; `checkout keys rotate` re-wraps these data keys with the cards'.
 *
 * The migration adds the three columns and seals every row in its transaction, with the key ring
 * `checkout migrate`, `checkout serve` and the worker processes hand it (they load VAULT_KEYS, or
 * the development key, before migrating). Only this small table is touched; it is locked for the
 * migration's transaction (a delivery being claimed waits that long). `secret` stays, nullable, for one release: a
 * process of the earlier release that creates or rotates a secret meanwhile writes it in clear; this
 * release still signs with such a row, and `checkout keys rotate` seals it (the CHECK allows exactly
 * one of the two forms). Run without keys on a database that holds secrets, the migration stops
 * before changing anything. The down migration opens every sealed secret back into `secret` (it
 * needs the same keys), so an earlier release can run again.
 */
export function webhookSecretsSealed(keys: KeyRing | undefined): Knex.Migration {
  return {
    async up(knex) {
      // First, so that the table is ours until the commit: no row is written in clear behind the sealing.
      await knex.raw('ALTER TABLE webhook_endpoint_secrets ADD COLUMN kek_id text, ADD COLUMN wrapped_key bytea, ADD COLUMN ciphertext bytea, ALTER COLUMN secret DROP NOT NULL');
      const clear = (await knex('webhook_endpoint_secrets').select('id', 'endpoint_id', 'secret').orderBy('id')) as { id: string; endpoint_id: string; secret: string }[];
      if (clear.length > 0 && !keys) {
        // The transaction rolls back: nothing is changed.
        throw new Error(`migration 027 seals ${clear.length} webhook signing secrets under the vault's keys: run it with \`checkout migrate\` (or \`checkout serve\`), which load VAULT_KEYS`);
      }
      for (const row of clear) {
        const sealed = keys!.seal(row.secret, row.endpoint_id);
        await knex('webhook_endpoint_secrets')
          .where({ id: row.id })
          .update({ kek_id: sealed.kekId, wrapped_key: Buffer.from(sealed.wrappedKey), ciphertext: Buffer.from(sealed.ciphertext), secret: null });
      }
      await knex.raw(`ALTER TABLE webhook_endpoint_secrets ADD CONSTRAINT webhook_endpoint_secrets_one_form CHECK (
        (secret IS NULL AND kek_id IS NOT NULL AND wrapped_key IS NOT NULL AND ciphertext IS NOT NULL)
        OR (secret IS NOT NULL AND kek_id IS NULL AND wrapped_key IS NULL AND ciphertext IS NULL))`);
      await knex.raw('CREATE INDEX webhook_endpoint_secrets_kek ON webhook_endpoint_secrets (kek_id) WHERE kek_id IS NOT NULL');
    },
    async down(knex) {
      await knex.raw('LOCK TABLE webhook_endpoint_secrets IN EXCLUSIVE MODE');
      const sealed = (await knex('webhook_endpoint_secrets').whereNotNull('ciphertext').select('id', 'endpoint_id', 'kek_id', 'wrapped_key', 'ciphertext')) as {
        id: string;
        endpoint_id: string;
        kek_id: string;
        wrapped_key: Buffer;
        ciphertext: Buffer;
      }[];
      if (sealed.length > 0 && !keys) throw new Error(`reverting migration 027 opens ${sealed.length} sealed webhook signing secrets: it needs the vault's keys (VAULT_KEYS)`);
      await knex.raw('ALTER TABLE webhook_endpoint_secrets DROP CONSTRAINT IF EXISTS webhook_endpoint_secrets_one_form');
      for (const row of sealed) {
        const secret = keys!.open({ kekId: row.kek_id, wrappedKey: row.wrapped_key, ciphertext: row.ciphertext }, row.endpoint_id);
        await knex('webhook_endpoint_secrets').where({ id: row.id }).update({ secret });
      }
      await knex.raw('DROP INDEX IF EXISTS webhook_endpoint_secrets_kek');
      await knex.raw('ALTER TABLE webhook_endpoint_secrets DROP COLUMN kek_id, DROP COLUMN wrapped_key, DROP COLUMN ciphertext, ALTER COLUMN secret SET NOT NULL');
    },
  };
}
