import { PostgresMerchantRepository } from './adapters/postgres/postgres-merchant-repository.ts';
import { MERCHANT_ERRORS } from './errors.ts';
import type { MerchantScope } from './ports/merchant-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { PostgresRateLimiter, type RateLimitPolicy } from './adapters/postgres/postgres-rate-limiter.ts';
import { PostgresAuthFailureLimiter, type AuthFailurePolicy } from './adapters/postgres/postgres-auth-failure-limiter.ts';
import { createAuthenticate, type Authenticate } from './application/authenticate.ts';
import { createCreateFirstSandbox, createCreateSandbox, type CreateFirstSandboxUseCase, type CreateSandboxUseCase } from './application/create-sandbox.ts';
import { createIssueApiKeys, type IssueApiKeysUseCase } from './application/issue-api-keys.ts';
import type { MerchantRepository } from './ports/merchant-repository.port.ts';
import type { TestCardDirectory } from '../payment/ports/test-card-directory.port.ts';
import type { SigningSecrets } from '../webhook/application/signing-secrets.ts';
import type { ModuleContext } from '../../kernel/module-manifest.ts';

/** The merchant module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const MERCHANT_MODULE = {
  name: 'merchant',
  postgresScope: (db): MerchantScope => ({ merchants: new PostgresMerchantRepository(db) }),
  errors: MERCHANT_ERRORS,
} satisfies ModuleManifest;

declare module '../../kernel/module-manifest.ts' {
  interface ModuleContext {
    /** Judges a call's API key (of the kind required) and answers its caller: the merchant module's part of every wiring's context. */
    readonly authenticate: Authenticate;
  }
}

/** What the merchant module's wiring needs besides the shared context (which its authentication completes). */
export interface MerchantWiringOptions {
  readonly apiBaseUrl: string;
  readonly checkoutHost: string;
  /** API rate limit per key; none when absent or when perSecond is 0. */
  readonly rateLimit?: RateLimitPolicy;
  /** Failed authentications allowed per client address and window; none when absent or when limit is 0. */
  readonly authFailures?: AuthFailurePolicy;
  /** Webhook signing secrets, sealed: a new sandbox's default endpoint gets one. */
  readonly secrets: SigningSecrets;
}

/** The merchant module wired: merchants and their keys, the callers' authentication, sandboxes. */
export interface MerchantWiring {
  readonly merchants: MerchantRepository & TestCardDirectory;
  readonly authenticate: Authenticate;
  readonly createSandbox: CreateSandboxUseCase;
  /** The first start's sandbox: test mode only, and only on a database with no merchant. */
  readonly createFirstSandbox: CreateFirstSandboxUseCase;
  /** A further key pair for a merchant (`checkout keys create`). */
  readonly issueApiKeys: IssueApiKeysUseCase;
}

/** Wires the merchant module over Postgres; it comes first, as every other module authenticates its callers with it. */
export function wireMerchant(context: Pick<ModuleContext, 'knex' | 'clock' | 'ids' | 'metrics'>, options: MerchantWiringOptions): MerchantWiring {
  const { knex, clock, ids } = context;
  const merchants = new PostgresMerchantRepository(knex);
  const limiter = options.rateLimit && options.rateLimit.perSecond > 0 ? new PostgresRateLimiter(knex, options.rateLimit) : undefined;
  const failures = options.authFailures && options.authFailures.limit > 0 ? { limiter: new PostgresAuthFailureLimiter(knex, options.authFailures), clock } : undefined;
  const sandboxes = { merchants, ids, clock, apiBaseUrl: options.apiBaseUrl, checkoutHost: options.checkoutHost, secrets: options.secrets };
  return {
    merchants,
    authenticate: createAuthenticate({ keys: merchants, limiter, failures, metrics: context.metrics }),
    createSandbox: createCreateSandbox(sandboxes),
    createFirstSandbox: createCreateFirstSandbox(sandboxes),
    issueApiKeys: createIssueApiKeys({ merchants, ids, clock }),
  };
}
