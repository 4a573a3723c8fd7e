/** Issues opaque, unguessable identifiers and secrets with a type prefix such as "ord_". */
export interface IdGenerator {
  /** A new id: the prefix followed by at least 128 random bits. */
  newId(prefix: string): string;
  /** A new secret (API key, signing secret): the prefix followed by at least 190 random bits. */
  newSecret(prefix: string): string;
}
