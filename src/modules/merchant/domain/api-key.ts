import type { KeyKind } from '../../../kernel/domain/caller.ts';

/** The parts of an API key that its text alone tells. */
export interface ParsedApiKey {
  readonly kind: KeyKind;
  readonly livemode: boolean;
}
