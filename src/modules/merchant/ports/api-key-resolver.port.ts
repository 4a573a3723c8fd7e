import type { Caller } from '../domain/caller.ts';

/** Resolves an API key to the merchant and mode it stands for. */
export interface ApiKeyResolver {
  /** The caller for an active key, or undefined for an unknown or revoked one. */
  resolve(apiKey: string): Promise<Caller | undefined>;
}
