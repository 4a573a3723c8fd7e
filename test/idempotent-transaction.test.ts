// The generic idempotency rule, driven directly with an operation no route has yet (as refunds will be):
// the key is claimed in the transaction of the work, so the key, the work and its response commit together.
import { create } from '@bufbuild/protobuf';
import { createHandlerContext } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresUnitOfWork } from '../src/kernel/adapters/postgres/postgres-unit-of-work.ts';
import { postgresScope } from '../src/composition/modules.ts';
import { createIdempotent, type Idempotent } from '../src/kernel/application/idempotent.ts';
import { cryptoIdGenerator } from '../src/kernel/adapters/node/crypto-id-generator.ts';
import { ENDPOINT_ID_PREFIX } from '../src/modules/webhook/domain/webhook-endpoint.entity.ts';
import type { Scope } from '../src/modules/merchant/domain/caller.ts';
import type { TransactionScope } from '../src/kernel/ports/unit-of-work.port.ts';
import { ReplayEventsRequestSchema, ReplayEventsResponseSchema, WebhookEndpointService } from '../src/gen/checkout/v1/webhook_pb.ts';
import { startTestService, type TestService } from './support/service.ts';
import { ephemeralKeyRing } from '../src/composition/vault-keys.ts';

let svc: TestService;
let scope: Scope;
let idempotent: Idempotent;

beforeAll(async () => {
  // Endpoints point at loopback (port 9, discard), so the suite registers no other host.
  svc = await startTestService({ webhookAllowPrivateNetworks: true });
  const shop = await svc.sandbox('Generic keys shop');
  scope = { merchantId: shop.merchant_id, livemode: false };
  idempotent = createIdempotent(new PostgresUnitOfWork(svc.db.knex, postgresScope));
});
afterAll(async () => {
  await svc?.close();
});

/** A handler context as Connect gives one, with the key header (or none). */
function context(key?: string) {
  return createHandlerContext({
    service: WebhookEndpointService,
    method: WebhookEndpointService.method.replayEvents,
    protocolName: 'connect',
    requestMethod: 'POST',
    url: 'http://127.0.0.1/checkout.v1.WebhookEndpointService/ReplayEvents',
    requestHeader: key === undefined ? {} : { 'idempotency-key': key },
  });
}

/** A call of an operation that has no route yet; only its name and its message types matter. */
function refund(endpointId: string) {
  return { operation: 'refunds.create', input: ReplayEventsRequestSchema, request: create(ReplayEventsRequestSchema, { endpointId }), output: ReplayEventsResponseSchema };
}

/** Some work with a visible effect in the transaction: an endpoint row. */
async function insertEndpoint(tx: TransactionScope, url: string): Promise<string> {
  const id = cryptoIdGenerator.newId(ENDPOINT_ID_PREFIX);
  const inserted = await tx.endpoints.insert(
    { id, merchantId: scope.merchantId, livemode: false, url, enabledEvents: ['*'], description: '', disabledReason: null, isDefault: false, createdAt: new Date() },
    ephemeralKeyRing().seal('whsec_test', id),
    100,
  );
  expect(inserted).not.toBe('limit_reached');
  return id;
}

const keyRow = (key: string) => svc.db.knex('idempotency_keys').where({ merchant_id: scope.merchantId, livemode: false, key }).first();
const endpointsAt = (url: string) => svc.db.knex('webhook_endpoints').where({ url });

describe('idempotency in the transaction of the work, for any operation', () => {
  it('work that fails after writing leaves neither its writes nor the key behind; the key then serves a corrected request', async () => {
    const url = 'http://127.0.0.1:9/failing';
    const ran: string[] = [];
    const failing = idempotent(context('refund-1'), scope, refund('we_a'), async (tx, afterCommit) => {
      await insertEndpoint(tx, url);
      afterCommit(async () => {
        ran.push('after-commit');
      });
      throw new Error('acquirer said no');
    });
    await expect(failing).rejects.toThrow('acquirer said no');
    expect(await endpointsAt(url)).toHaveLength(0);
    expect(await keyRow('refund-1')).toBeUndefined();
    expect(ran).toEqual([]); // rolled back: what waited for the commit never runs

    const answer = await idempotent(context('refund-1'), scope, refund('we_a'), async (tx, afterCommit) => {
      await insertEndpoint(tx, url);
      afterCommit(async () => {
        // Runs after the commit: another connection sees the row.
        ran.push(`after-commit:${(await endpointsAt(url)).length}`);
      });
      return create(ReplayEventsResponseSchema, { queued: 7 });
    });
    expect(answer.queued).toBe(7);
    expect(ran).toEqual(['after-commit:1']);
    const row = await keyRow('refund-1');
    expect(row).toMatchObject({ operation: 'refunds.create', status: 'completed', response: { queued: 7 } });
  });

  it('concurrent calls with one key run the work once; the others wait for its commit and replay its answer', async () => {
    const url = 'http://127.0.0.1:9/concurrent';
    let runs = 0;
    const contexts = Array.from({ length: 8 }, () => context('refund-2'));
    const answers = await Promise.all(
      contexts.map((ctx) =>
        idempotent(ctx, scope, refund('we_b'), async (tx) => {
          runs += 1;
          await insertEndpoint(tx, url);
          await new Promise((resolve) => setTimeout(resolve, 50)); // hold the claim while the others arrive
          return create(ReplayEventsResponseSchema, { queued: runs });
        }),
      ),
    );
    expect(runs).toBe(1);
    expect(new Set(answers.map((a) => a.queued))).toEqual(new Set([1]));
    expect(contexts.filter((ctx) => ctx.responseHeader.get('idempotent-replayed') === 'true')).toHaveLength(7);
    expect(await endpointsAt(url)).toHaveLength(1);
  });

  it('a waiting call whose first request rolled back runs the work itself', async () => {
    const url = 'http://127.0.0.1:9/second-chance';
    let attempt = 0;
    const work = async (tx: TransactionScope) => {
      attempt += 1;
      const mine = attempt;
      await insertEndpoint(tx, url);
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (mine === 1) throw new Error('first one fails');
      return create(ReplayEventsResponseSchema, { queued: mine });
    };
    const [first, second] = await Promise.allSettled([
      idempotent(context('refund-3'), scope, refund('we_c'), work),
      // Started a little later, so that it waits on the first one's claim.
      new Promise((resolve) => setTimeout(resolve, 10)).then(() => idempotent(context('refund-3'), scope, refund('we_c'), work)),
    ]);
    expect(first.status).toBe('rejected');
    expect(second).toMatchObject({ status: 'fulfilled', value: { queued: 2 } });
    expect(await endpointsAt(url)).toHaveLength(1);
  });

  it('the key used for another operation or another request is refused without running the work', async () => {
    await idempotent(context('refund-4'), scope, refund('we_d'), async () => create(ReplayEventsResponseSchema, { queued: 1 }));
    let ran = false;
    const work = async () => {
      ran = true;
      return create(ReplayEventsResponseSchema, { queued: 2 });
    };
    const otherRequest = idempotent(context('refund-4'), scope, refund('we_other'), work);
    await expect(otherRequest).rejects.toMatchObject({ code: 'idempotency.key_reused' });
    const otherOperation = idempotent(context('refund-4'), scope, { ...refund('we_d'), operation: 'captures.create' }, work);
    await expect(otherOperation).rejects.toMatchObject({ code: 'idempotency.key_reused' });
    expect(ran).toBe(false);
    // Another mode is another key space.
    const live = await idempotent(context('refund-4'), { ...scope, livemode: true }, refund('we_other'), work);
    expect(live.queued).toBe(2);
  });

  it('without a key the work just runs in a transaction, every time', async () => {
    const url = 'http://127.0.0.1:9/unkeyed';
    for (let i = 0; i < 2; i++) await idempotent(context(), scope, refund('we_e'), async (tx) => create(ReplayEventsResponseSchema, { queued: (await insertEndpoint(tx, url)).length }));
    expect(await endpointsAt(url)).toHaveLength(2);
    await expect(idempotent(context(' bad key'), scope, refund('we_e'), async () => create(ReplayEventsResponseSchema))).rejects.toMatchObject({ code: 'idempotency.key_invalid' });
  });
});
