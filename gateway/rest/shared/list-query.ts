import Type, { type TProperties } from 'typebox';
import { ERROR_NOTE } from './schemas.ts';

// The one query of every list route: limit and starting_after, plus the resource's own filters.

const GIVEN_ONCE = { [ERROR_NOTE]: { code: 'parameter_invalid_string', message: '{param} must be given once.' } };

/** A filter of a list route: a string given at most once. */
export function Filter(description: string) {
  return Type.Optional(Type.String({ description, ...GIVEN_ONCE }));
}

/**
 * The query schema of a list route: `limit` (1-100, default 10) and `starting_after` (an id of the
 * previous page's last object), then `filters`; any other parameter is refused by name.
 */
export function ListQuery<F extends TProperties>(filters: F) {
  return Type.Object(
    {
      limit: Type.Optional(
        Type.String({
          pattern: '^[0-9]{1,6}$',
          description: 'How many objects to return, 1 to 100; 10 when omitted.',
          [ERROR_NOTE]: { code: 'limit_invalid', message: 'limit must be an integer from 1 to 100.' },
        }),
      ),
      starting_after: Filter('The id of the last object of the previous page; this page starts after it.'),
      ...filters,
    },
    { additionalProperties: false },
  );
}

/** A list query Fastify has validated against {@link ListQuery}. */
export interface ListQueryValues {
  readonly limit?: string;
  readonly starting_after?: string;
}

/** The page the core is asked for: 0 for "the default limit", -1 for a limit the core refuses (0 or more than 100 is its rule). */
export function page(query: ListQueryValues): { limit: number; startingAfter: string | undefined } {
  return {
    limit: query.limit === undefined ? 0 : Number(query.limit) || -1,
    startingAfter: query.starting_after,
  };
}
