import type { KeyKind } from './api-key.ts';

/** Who is calling: the merchant and mode a verified API key stands for. */
export interface Caller {
  /** The API key's id (never the key itself): what rate limits are counted by. */
  readonly keyId: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly keyKind: KeyKind;
  /** The merchant's checkout host, on which checkout URLs are built. */
  readonly checkoutHost: string;
}

/** The partition of data a caller may see: one merchant in one mode. */
export interface Scope {
  readonly merchantId: string;
  readonly livemode: boolean;
}
