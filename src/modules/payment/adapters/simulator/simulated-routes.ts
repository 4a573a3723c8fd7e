import type { TestCardDirectory } from '../../ports/test-card-directory.port.ts';
import { SimulatedProcessor } from './simulated-processor.ts';
import { ALPHA, BETA } from './transformers.ts';

/** The primary test route: alpha, in ISO 8583 codes; it soft-declines the soft-decline card. */
export function simulatedAlpha(cards: TestCardDirectory): SimulatedProcessor {
  return new SimulatedProcessor({ route: 'simulated_alpha', dialect: ALPHA, approvesSoftDecline: false, cards });
}

/** The alternative test route: beta, in status words; it approves what alpha soft-declines. */
export function simulatedBeta(cards: TestCardDirectory): SimulatedProcessor {
  return new SimulatedProcessor({ route: 'simulated_beta', dialect: BETA, approvesSoftDecline: true, cards });
}
