import type { PaymentRoute } from '../../../src/modules/payment/domain/routing.ts';
import type { PaymentRouteRepository } from '../../../src/modules/payment/ports/payment-route-repository.port.ts';
import type { TablesRef } from './memory-tables.ts';

const PROCESSOR_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** PaymentRouteRepository in memory: each merchant's ordered routes per mode, replaced whole. */
export class MemoryPaymentRouteRepository implements PaymentRouteRepository {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async list(merchantId: string, livemode: boolean): Promise<PaymentRoute[]> {
    return (this.#tables().paymentRoutes.get(`${merchantId}:${livemode}`) ?? []).map((route) => ({ ...route }));
  }

  async replace(merchantId: string, livemode: boolean, routes: readonly PaymentRoute[]): Promise<void> {
    const tables = this.#tables();
    // The table's checks: its merchant exists (the foreign key), each processor is a well-formed name.
    if (routes.length > 0 && !tables.merchants.has(merchantId)) throw new Error(`payment routes: no merchant ${merchantId} (foreign key)`);
    for (const route of routes) if (!PROCESSOR_NAME.test(route.processor)) throw new Error(`payment routes: processor "${route.processor}" is not a processor name (check)`);
    const key = `${merchantId}:${livemode}`;
    if (routes.length === 0) tables.paymentRoutes.delete(key);
    else tables.paymentRoutes.set(key, routes.map((route) => ({ processor: route.processor, processorAccountId: route.processorAccountId })));
  }
}
