import { VOID_ERRORS } from './errors.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The void module's parts for the composition root: its error codes' mappings. */
export const VOID_MODULE = {
  name: 'void',
  errors: VOID_ERRORS,
} satisfies ModuleManifest;
