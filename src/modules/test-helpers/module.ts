import { TEST_HELPERS_ERRORS } from './errors.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { createTestHelperService } from './application/test-helper-service.ts';
import { TestHelperService } from '../../gen/checkout/v1/test_helpers_pb.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';

/** The test helpers module's parts for the composition root: its error codes' mappings. */
export const TEST_HELPERS_MODULE = {
  name: 'test-helpers',
  errors: TEST_HELPERS_ERRORS,
} satisfies ModuleManifest;

/** Wires TestHelperService (test mode only) over the use cases it drives: transfers, payout runs, disputes. */
export function wireTestHelpers(context: ModuleContext, deps: Omit<Parameters<typeof createTestHelperService>[0], 'authenticate' | 'idempotent'>): ModuleWiring {
  const service = createTestHelperService({ authenticate: context.authenticate, idempotent: context.idempotent, ...deps });
  return { services: [connectService(TestHelperService, service, 'secret')] };
}
