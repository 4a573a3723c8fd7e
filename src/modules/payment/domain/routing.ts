import { DECLINES, type DeclineCode } from './decline-code.ts';

/** One route of a merchant's ordered list for a mode: the processor it names, and the merchant's account there. */
export interface PaymentRoute {
  /** A processor's name, as the route registry knows it (`simulated_alpha`). */
  readonly processor: string;
  /** The merchant's account at the processor; null: the processor's own default (no processor settings yet). */
  readonly processorAccountId: string | null;
}

/** A route's answer as failover sees it: a decline with our code, or any other answer. */
export interface RouteAnswer {
  readonly kind: string;
  readonly declineCode?: DeclineCode;
}

/**
 * The failover rule: whether a route's answer moves the payment on to the next route. A soft
 * decline does (another acquirer may approve what this one's issuer link could not); an approval,
 * a challenge and a hard decline end the payment's routing there. Timeouts and a processor's 5xx,
 * once the processor port reports them, belong here too.
 */
export function movesToNextRoute(answer: RouteAnswer): boolean {
  return answer.kind === 'declined' && answer.declineCode !== undefined && DECLINES[answer.declineCode].soft;
}

/**
 * The position of the route a payment goes to after the route at `position` (of `routeCount`)
 * answered, or undefined when the answer stands: it does not move on, or no route is left.
 */
export function nextRoute(routeCount: number, position: number, answer: RouteAnswer): number | undefined {
  if (!movesToNextRoute(answer)) return undefined;
  return position + 1 < routeCount ? position + 1 : undefined;
}

/** The routes a payment takes: the merchant's own list for the mode, or the mode's default when it has none. */
export function routesOrDefault<R>(configured: readonly R[], defaults: readonly R[]): readonly R[] {
  return configured.length > 0 ? configured : defaults;
}
