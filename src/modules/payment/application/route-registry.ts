import { routesOrDefault } from '../domain/routing.ts';
import type { PaymentProcessor } from '../ports/payment-processor.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';

/**
 * The processors each mode may route to, by their names (`PaymentProcessor.route`), in the order
 * of the mode's default routes. A name is one processor across both modes.
 */
export interface RegisteredProcessors {
  /** Test mode's processors: the simulated acquirers. */
  readonly test: readonly PaymentProcessor[];
  /** Live mode's processors: none until a live acquirer is configured. */
  readonly live: readonly PaymentProcessor[];
}

/** Which processors a payment takes, in order, and which processor an attempt was made on. */
export interface RouteRegistry {
  /**
   * The routes a payment of the merchant in this mode takes, first to last, as processors: the
   * merchant's own (`payment_routes`, read through `tx` and kept for a short while), or the mode's
   * default when it has none. A route naming a processor the mode does not register is skipped.
   * Empty: no route, and the payment fails with processing_unavailable.
   */
  routesIn(tx: TransactionScope, merchantId: string, livemode: boolean): Promise<readonly PaymentProcessor[]>;
  /** The processor of the route an attempt was made on (undefined: a route with no processor, a bank transfer's). */
  processorOf(route: string): PaymentProcessor | undefined;
}

/** How long a merchant's routes are reused: a change to them takes effect within this. */
const ROUTES_TTL_MS = 30_000;
/** Beyond this many merchant-modes the cache starts again empty. */
const MAX_CACHED = 10_000;

/** Builds the registry over the processors of each mode. */
export function createRouteRegistry(processors: RegisteredProcessors): RouteRegistry {
  const byName = new Map<string, PaymentProcessor>();
  const modes = { test: new Map<string, PaymentProcessor>(), live: new Map<string, PaymentProcessor>() };
  for (const mode of ['test', 'live'] as const) {
    for (const p of processors[mode]) {
      modes[mode].set(p.route, p);
      byName.set(p.route, p);
    }
  }
  const defaults = { test: processors.test.map((p) => p.route), live: processors.live.map((p) => p.route) };
  const cache = new Map<string, { names: readonly string[]; until: number }>();

  async function namesIn(tx: TransactionScope, merchantId: string, livemode: boolean): Promise<readonly string[]> {
    const key = `${merchantId}/${livemode}`;
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.names;
    const own = (await tx.paymentRoutes.list(merchantId, livemode)).map((r) => r.processor);
    const names = routesOrDefault(own, livemode ? defaults.live : defaults.test);
    if (cache.size > MAX_CACHED) cache.clear();
    cache.set(key, { names, until: Date.now() + ROUTES_TTL_MS });
    return names;
  }

  return {
    async routesIn(tx, merchantId, livemode) {
      const known = livemode ? modes.live : modes.test;
      return (await namesIn(tx, merchantId, livemode)).flatMap((name) => known.get(name) ?? []);
    },
    processorOf: (route) => byName.get(route),
  };
}
