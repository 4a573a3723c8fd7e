import type { PaymentProcessor } from '../ports/payment-processor.port.ts';

/** Acquirer routes: attempts go to primary; a soft decline is retried once on alternative. */
export interface Routes {
  readonly primary: PaymentProcessor;
  readonly alternative: PaymentProcessor;
}

/** Which processors a payment may use, and which processor an attempt was made on. */
export interface RouteRegistry {
  /** The routes of a mode (undefined: no live acquirer yet). */
  routesOf(livemode: boolean): Routes | undefined;
  /** The processor of the route an attempt was made on (undefined: a route with no processor, a bank transfer's). */
  processorOf(route: string): PaymentProcessor | undefined;
}

/** Builds the registry of the configured routes, by mode. */
export function createRouteRegistry(config: { readonly testRoutes: Routes; readonly liveRoutes: Routes | undefined }): RouteRegistry {
  const processors = new Map<string, PaymentProcessor>();
  for (const routes of [config.testRoutes, config.liveRoutes]) {
    if (routes) for (const p of [routes.primary, routes.alternative]) processors.set(p.route, p);
  }
  return {
    routesOf: (livemode) => (livemode ? config.liveRoutes : config.testRoutes),
    processorOf: (route) => processors.get(route),
  };
}
