import type { PaymentRoute } from '../domain/routing.ts';

/** A merchant's ordered routes per mode (the `payment_routes` table). */
export interface PaymentRouteRepository {
  /** The merchant's own routes in a mode, first to last; empty when it has none (the mode's default applies). */
  list(merchantId: string, livemode: boolean): Promise<PaymentRoute[]>;
  /** Replaces the merchant's routes in a mode by `routes`, in their order; an empty list returns it to the default. */
  replace(merchantId: string, livemode: boolean, routes: readonly PaymentRoute[]): Promise<void>;
}
