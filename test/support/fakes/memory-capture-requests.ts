import type { CaptureRequest, CaptureRequests } from '../../../src/modules/capture/ports/capture-request.port.ts';
import { ConflictError } from '../../../src/kernel/ports/errors.ts';
import type { TablesRef } from './memory-tables.ts';

/** CaptureRequests in memory: at most one per order (the table's primary key). */
export class MemoryCaptureRequests implements CaptureRequests {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async add(request: CaptureRequest): Promise<void> {
    const tables = this.#tables();
    if (tables.captures.has(request.orderId)) throw new ConflictError('The change conflicts with one made at the same time.');
    if (!tables.orders.has(request.orderId)) throw new Error(`capture request: no order ${request.orderId} (foreign key)`);
    tables.captures.set(request.orderId, { ...request });
  }

  async find(orderId: string): Promise<CaptureRequest | undefined> {
    return this.#tables().captures.get(orderId);
  }

  async remove(orderId: string): Promise<void> {
    this.#tables().captures.delete(orderId);
  }

  async stale(before: Date, limit: number): Promise<string[]> {
    return [...this.#tables().captures.values()]
      .filter((r) => r.requestedAt.getTime() < before.getTime())
      .sort((a, b) => a.requestedAt.getTime() - b.requestedAt.getTime())
      .slice(0, limit)
      .map((r) => r.orderId);
  }
}
