/** Which kind of key: secret keys call the API, publishable keys only the checkout. */
export type KeyKind = 'secret' | 'publishable';

/** The parts of an API key that its text alone tells. */
export interface ParsedApiKey {
  readonly kind: KeyKind;
  readonly livemode: boolean;
}
