import type { Clock } from '../ports/clock.port.ts';
import type { IdGenerator } from '../ports/id-generator.port.ts';
import type { MerchantRepository, NewApiKey } from '../ports/merchant-repository.port.ts';
import { parseCurrency } from '../domain/money/money.ts';
import { parseText } from '../domain/shared/text.ts';
import { issueTestCards, type TestCard } from '../domain/payment/test-card.ts';
import { randomInt } from 'node:crypto';

/** What a new sandbox merchant is handed, once: its keys are never shown again. */
export interface SandboxCredentials {
  readonly merchant_id: string;
  readonly name: string;
  readonly settlement_currency: string;
  readonly test_secret_key: string;
  readonly test_publishable_key: string;
  readonly live_secret_key: string;
  readonly live_publishable_key: string;
  readonly webhook_secret: string;
  readonly live_webhook_secret: string;
  readonly api_base_url: string;
  readonly checkout_host: string;
  /** This sandbox's own test cards: any future expiry, any CVC. Shown once, like the keys. */
  readonly test_cards: ReadonlyArray<{ number: string; brand: string; behaviour: string; description: string }>;
  /** How to simulate a bank transfer in test mode. */
  readonly transfer_simulation: string;
}

/** Input of the sandbox use case. */
export interface CreateSandboxCommand {
  readonly name: string;
  readonly settlementCurrency: string;
  /** Only create when the database holds no merchant yet (first start). */
  readonly onlyIfNoMerchants?: boolean;
}

/** Creates a sandbox merchant; undefined when onlyIfNoMerchants and one exists. */
export type CreateSandboxUseCase = (command: CreateSandboxCommand) => Promise<SandboxCredentials | undefined>;

/**
 * Creates the sandbox use case: a merchant with test and live keys (stored
 * only as hashes) and webhook signing secrets.
 */
export function createCreateSandbox(deps: {
  readonly merchants: MerchantRepository;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly apiBaseUrl: string;
  readonly checkoutHost: string;
}): CreateSandboxUseCase {
  return async (command) => {
    const name = parseText(command.name, 'name', 'request.parameter_invalid', 100);
    const settlementCurrency = parseCurrency(command.settlementCurrency, 'settlement_currency').code;
    const key = (kind: NewApiKey['kind'], livemode: boolean): NewApiKey => ({
      id: deps.ids.newId('key_'),
      kind,
      livemode,
      secret: deps.ids.newSecret(`${kind === 'secret' ? 'sk' : 'pk'}_${livemode ? 'live' : 'test'}_`),
    });
    const keys = [key('secret', false), key('publishable', false), key('secret', true), key('publishable', true)] as const;
    const secrets = [
      { livemode: false, secret: deps.ids.newSecret('whsec_') },
      { livemode: true, secret: deps.ids.newSecret('whsec_') },
    ] as const;
    const merchant = {
      id: deps.ids.newId('mer_'),
      name,
      checkoutHost: deps.checkoutHost,
      settlementCurrency,
      paymentMethods: ['card', 'wallet', 'bank_transfer'] as const,
      createdAt: deps.clock.now(),
    };
    const testCards: TestCard[] = issueTestCards((count) => Array.from({ length: count }, () => randomInt(10)).join(''));
    const inserted = await deps.merchants.insertWithCredentials(merchant, keys, secrets, testCards, {
      onlyIfNoMerchants: command.onlyIfNoMerchants ?? false,
    });
    if (!inserted) return undefined;
    return {
      merchant_id: merchant.id,
      name,
      settlement_currency: settlementCurrency,
      test_secret_key: keys[0].secret,
      test_publishable_key: keys[1].secret,
      live_secret_key: keys[2].secret,
      live_publishable_key: keys[3].secret,
      webhook_secret: secrets[0].secret,
      live_webhook_secret: secrets[1].secret,
      api_base_url: deps.apiBaseUrl,
      checkout_host: deps.checkoutHost,
      test_cards: testCards.map((card) => ({ number: card.number, brand: card.brand, behaviour: card.behaviour, description: card.description })),
      transfer_simulation: `POST ${deps.apiBaseUrl}/v1/test_helpers/orders/{order_id}/simulate_transfer with the test secret key`,
    };
  };
}
