import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { MerchantRepository, NewApiKey } from '../ports/merchant-repository.port.ts';

/** A new secret and publishable key of one mode, shown once: only their hashes are stored. */
export interface IssuedApiKeys {
  readonly merchant_id: string;
  readonly livemode: boolean;
  readonly secret_key: string;
  readonly publishable_key: string;
}

/** Input of the key-issuing use case. */
export interface IssueApiKeysCommand {
  readonly merchantId: string;
  readonly livemode: boolean;
}

/** Issues a key pair for a merchant; undefined when there is no such merchant. */
export type IssueApiKeysUseCase = (command: IssueApiKeysCommand) => Promise<IssuedApiKeys | undefined>;

/** A new secret key and publishable key of one mode (sk_test_/pk_test_ or sk_live_/pk_live_). */
export function newKeyPair(ids: IdGenerator, livemode: boolean): readonly [NewApiKey, NewApiKey] {
  const key = (kind: NewApiKey['kind']): NewApiKey => ({
    id: ids.newId('key_'),
    kind,
    livemode,
    secret: ids.newSecret(`${kind === 'secret' ? 'sk' : 'pk'}_${livemode ? 'live' : 'test'}_`),
  });
  return [key('secret'), key('publishable')];
}

/**
 * Creates the use case behind `checkout keys create`: a further secret and
 * publishable key for an existing merchant, in test or live mode. Keys issued
 * before stay valid.
 */
export function createIssueApiKeys(deps: { readonly merchants: MerchantRepository; readonly ids: IdGenerator; readonly clock: Clock }): IssueApiKeysUseCase {
  return async ({ merchantId, livemode }) => {
    const [secret, publishable] = newKeyPair(deps.ids, livemode);
    const stored = await deps.merchants.addApiKeys(merchantId, [secret, publishable], deps.clock.now());
    if (!stored) return undefined;
    return { merchant_id: merchantId, livemode, secret_key: secret.secret, publishable_key: publishable.secret };
  };
}
