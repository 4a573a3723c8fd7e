import { CHECKOUT_ERRORS } from './errors.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';

/** The checkout module's parts for the composition root: its error codes' mappings. */
export const CHECKOUT_MODULE = {
  name: 'checkout',
  errors: CHECKOUT_ERRORS,
} satisfies ModuleManifest;
