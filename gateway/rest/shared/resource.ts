import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';

/**
 * One REST resource of /v1 (gateway/rest/<resource>/resource.ts): the shared schemas its
 * routes refer to by $id, and the registration of its routes as calls to the core's Connect
 * services over `transport`. gateway/rest/resources.ts lists them; rest-api.ts registers the list.
 */
export interface RestResource {
  /** The resource's folder name under gateway/rest. */
  readonly name: string;
  /** Schemas with an $id, added before any route so that routes and the OpenAPI document can refer to them. */
  readonly schemas: readonly TSchema[];
  readonly register: (app: FastifyInstance, transport: Transport) => void;
}
