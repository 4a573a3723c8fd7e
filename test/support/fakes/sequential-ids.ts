import type { IdGenerator } from '../../../src/kernel/ports/id-generator.port.ts';

/**
 * An IdGenerator that counts: readable ids ("ord_0001") for assertions, still unique per prefix.
 * Ids sort as they were issued, as the fakes' tie-breaks by id expect.
 */
export class SequentialIds implements IdGenerator {
  readonly #counters = new Map<string, number>();

  newId(prefix: string): string {
    const next = (this.#counters.get(prefix) ?? 0) + 1;
    this.#counters.set(prefix, next);
    return `${prefix}${String(next).padStart(4, '0')}`;
  }

  newSecret(prefix: string): string {
    return `${this.newId(`${prefix}secret_`)}${'x'.repeat(32)}`;
  }
}
