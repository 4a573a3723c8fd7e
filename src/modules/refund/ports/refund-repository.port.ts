import type { Refund } from '../domain/refund.entity.ts';

/** Refunds, and the amount each order holds reserved for those still pending. */
export interface RefundRepository {
  /**
   * Inserts a pending refund and reserves its amount on its order. The order's constraint refuses
   * a reservation past what remains, whatever raced.
   */
  reserve(refund: Refund): Promise<void>;
  /** What the order's pending refunds hold reserved. */
  pendingAmount(orderId: string): Promise<bigint>;
  /** The refund, locked until the transaction ends. */
  lock(refundId: string): Promise<Refund | undefined>;
  /** pending → succeeded with the acquirer's reference; its reservation is released (the order's amount_refunded takes it). */
  markSucceeded(refund: Refund, processorRef: string, now: Date): Promise<void>;
  /** pending → failed with the acquirer's reason; its reservation is released. */
  markFailed(refund: Refund, failureCode: string, now: Date): Promise<void>;
  /** The order's refunds, oldest first. */
  listForOrder(orderId: string): Promise<Refund[]>;
  /** The refunds of each order, oldest first (orders without any are absent). */
  listForOrders(orderIds: readonly string[]): Promise<Map<string, Refund[]>>;
  /**
   * Takes up to `limit` refunds pending since before `before` (a process stopped between asking
   * the acquirer and recording its answer), leasing each by moving its updated_at to `now` so
   * that another sweeper skips it; answers their ids.
   */
  claimStale(before: Date, now: Date, limit: number): Promise<string[]>;
  /** One refund by id. */
  findById(refundId: string): Promise<Refund | undefined>;
}
