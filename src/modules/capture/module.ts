import { PostgresCaptureRequests } from './adapters/postgres/postgres-capture-requests.ts';
import { CAPTURE_ERRORS } from './errors.ts';
import type { CaptureScope } from './ports/capture-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The capture module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const CAPTURE_MODULE = {
  name: 'capture',
  postgresScope: (db): CaptureScope => ({ captures: new PostgresCaptureRequests(db) }),
  errors: CAPTURE_ERRORS,
} satisfies ModuleManifest;
