import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { MerchantRecord, MerchantRepository, NewApiKey } from '../ports/merchant-repository.port.ts';
import { defaultEndpointId } from '../../webhook/domain/webhook-endpoint.entity.ts';
import { SIGNING_SECRET_PREFIX, type SigningSecrets } from '../../webhook/application/signing-secrets.ts';
import { newKeyPair } from './issue-api-keys.ts';
import { parseCurrency } from '../../../kernel/domain/money.ts';
import { parseText } from '../../../kernel/domain/text.ts';
import { issueTestCards, type TestCard } from '../../payment/domain/test-card.ts';
import { randomInt } from 'node:crypto';

/** What the first start hands over, once: test mode only (live keys come from an explicit command). */
export interface TestSandboxCredentials {
  readonly merchant_id: string;
  readonly name: string;
  readonly settlement_currency: string;
  readonly test_secret_key: string;
  readonly test_publishable_key: string;
  readonly webhook_secret: string;
  readonly api_base_url: string;
  readonly checkout_host: string;
  /** This sandbox's own test cards: any future expiry, any CVC. Shown once, like the keys. */
  readonly test_cards: ReadonlyArray<{ number: string; brand: string; behaviour: string; description: string }>;
  /** How to simulate a bank transfer in test mode. */
  readonly transfer_simulation: string;
}

/** What `checkout sandbox create` hands over, once: test and live keys are never shown again. */
export interface SandboxCredentials extends TestSandboxCredentials {
  readonly live_secret_key: string;
  readonly live_publishable_key: string;
  readonly live_webhook_secret: string;
}

/** Input of the sandbox use cases. */
export interface CreateSandboxCommand {
  readonly name: string;
  readonly settlementCurrency: string;
}

/** Creates a sandbox merchant with test and live credentials. */
export type CreateSandboxUseCase = (command: CreateSandboxCommand) => Promise<SandboxCredentials>;

/** Creates the first sandbox merchant, test mode only; undefined when the database already holds a merchant. */
export type CreateFirstSandboxUseCase = (command: CreateSandboxCommand) => Promise<TestSandboxCredentials | undefined>;

interface SandboxDeps {
  readonly merchants: MerchantRepository;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly apiBaseUrl: string;
  readonly checkoutHost: string;
  /** Seals each mode's webhook secret for its default endpoint: it is shown once, and stored only sealed. */
  readonly secrets: Pick<SigningSecrets, 'seal'>;
}

/** The credentials of one mode: a key pair and the default endpoint's webhook secret. */
interface ModeCredentials {
  readonly livemode: boolean;
  readonly keys: readonly [NewApiKey, NewApiKey];
  readonly webhookSecret: { readonly secret: string };
}

/** A sandbox as stored, with the secrets it was given. */
interface StoredSandbox {
  readonly merchant: MerchantRecord;
  readonly test: ModeCredentials;
  readonly live: ModeCredentials | undefined;
  readonly testCards: readonly TestCard[];
}

/**
 * Stores a new sandbox merchant with a key pair and a default webhook endpoint per mode (live only when asked);
 * undefined when onlyIfNoMerchants and the database already holds a merchant.
 */
async function insertSandbox(deps: SandboxDeps, command: CreateSandboxCommand, withLive: boolean, onlyIfNoMerchants: boolean): Promise<StoredSandbox | undefined> {
  const name = parseText(command.name, 'name', 'request.parameter_invalid', 100);
  const settlementCurrency = parseCurrency(command.settlementCurrency, 'settlement_currency').code;
  const mode = (livemode: boolean): ModeCredentials => ({ livemode, keys: newKeyPair(deps.ids, livemode), webhookSecret: { secret: deps.ids.newSecret(SIGNING_SECRET_PREFIX) } });
  const test = mode(false);
  const live = withLive ? mode(true) : undefined;
  const merchant: MerchantRecord = {
    id: deps.ids.newId('mer_'),
    name,
    checkoutHost: deps.checkoutHost,
    settlementCurrency,
    paymentMethods: ['card', 'wallet', 'bank_transfer'],
    createdAt: deps.clock.now(),
  };
  const testCards: TestCard[] = issueTestCards((count) => Array.from({ length: count }, () => randomInt(10)).join(''));
  const inserted = await deps.merchants.insertWithCredentials(
    merchant,
    [...test.keys, ...(live?.keys ?? [])],
    [test, ...(live ? [live] : [])].map((m) => ({ livemode: m.livemode, secret: deps.secrets.seal(m.webhookSecret.secret, defaultEndpointId(merchant.id, m.livemode)) })),
    testCards,
    { onlyIfNoMerchants },
  );
  return inserted ? { merchant, test, live, testCards } : undefined;
}

/** The test-mode part of the credentials, in the order they are printed. */
function testCredentials(deps: SandboxDeps, sandbox: StoredSandbox): TestSandboxCredentials {
  return {
    merchant_id: sandbox.merchant.id,
    name: sandbox.merchant.name,
    settlement_currency: sandbox.merchant.settlementCurrency,
    test_secret_key: sandbox.test.keys[0].secret,
    test_publishable_key: sandbox.test.keys[1].secret,
    webhook_secret: sandbox.test.webhookSecret.secret,
    api_base_url: deps.apiBaseUrl,
    checkout_host: deps.checkoutHost,
    test_cards: sandbox.testCards.map((card) => ({ number: card.number, brand: card.brand, behaviour: card.behaviour, description: card.description })),
    transfer_simulation: `POST ${deps.apiBaseUrl}/v1/test_helpers/orders/{order_id}/simulate_transfer with the test secret key`,
  };
}

/**
 * Creates the sandbox use case: a merchant with test and live keys (stored
 * only as hashes) and webhook signing secrets (stored sealed).
 */
export function createCreateSandbox(deps: SandboxDeps): CreateSandboxUseCase {
  return async (command) => {
    const sandbox = await insertSandbox(deps, command, true, false);
    // Without onlyIfNoMerchants the insert always happens, and live credentials were asked for.
    if (!sandbox?.live) throw new Error('sandbox not stored');
    const test = testCredentials(deps, sandbox);
    const live = sandbox.live;
    return {
      merchant_id: test.merchant_id,
      name: test.name,
      settlement_currency: test.settlement_currency,
      test_secret_key: test.test_secret_key,
      test_publishable_key: test.test_publishable_key,
      live_secret_key: live.keys[0].secret,
      live_publishable_key: live.keys[1].secret,
      webhook_secret: test.webhook_secret,
      live_webhook_secret: live.webhookSecret.secret,
      api_base_url: test.api_base_url,
      checkout_host: test.checkout_host,
      test_cards: test.test_cards,
      transfer_simulation: test.transfer_simulation,
    };
  };
}

/**
 * Creates the first-start use case: on a database with no merchant, a sandbox
 * merchant with test keys and a test webhook secret only. A first start prints
 * what it creates to the service's log, so it creates no live key: one that is
 * never shown would be useless, and one that is shown would sit in the log.
 */
export function createCreateFirstSandbox(deps: SandboxDeps): CreateFirstSandboxUseCase {
  return async (command) => {
    const sandbox = await insertSandbox(deps, command, false, true);
    return sandbox ? testCredentials(deps, sandbox) : undefined;
  };
}
