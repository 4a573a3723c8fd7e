import { TEST_HELPERS_ERRORS } from './errors.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The test helpers module's parts for the composition root: its error codes' mappings. */
export const TEST_HELPERS_MODULE = {
  name: 'test-helpers',
  errors: TEST_HELPERS_ERRORS,
} satisfies ModuleManifest;
