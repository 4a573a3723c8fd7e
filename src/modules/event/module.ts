import { PostgresEventOutbox } from './adapters/postgres/postgres-event-outbox.ts';
import { EVENT_ERRORS } from './errors.ts';
import type { EventScope } from './ports/event-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The event module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const EVENT_MODULE = {
  name: 'event',
  postgresScope: (db): EventScope => ({ outbox: new PostgresEventOutbox(db) }),
  errors: EVENT_ERRORS,
} satisfies ModuleManifest;
