import type { Scope } from '../../merchant/domain/caller.ts';
import type { Dispute } from '../domain/dispute.entity.ts';

/** A page of disputes, newest first. */
export interface DisputePage {
  readonly disputes: readonly Dispute[];
  readonly hasMore: boolean;
}

/** Disputes, and the amount each order holds in its open and lost disputes. */
export interface DisputeRepository {
  /**
   * Inserts an opened dispute and adds its amount to what its order holds disputed. The order's
   * constraint refuses refunds and disputes past its amount, whatever raced.
   * @throws ConflictError when the order's dispute test card already opened one
   */
  open(dispute: Dispute): Promise<void>;
  /** What the order's open and lost disputes hold. */
  heldAmount(orderId: string): Promise<bigint>;
  /** The dispute, locked until the transaction ends. */
  lock(disputeId: string): Promise<Dispute | undefined>;
  /** needs_response → under_review, with the evidence as submitted. */
  recordSubmission(dispute: Dispute, now: Date): Promise<void>;
  /** → won (its hold on the order is released: the money may be refunded again) or lost (the hold stays). */
  recordOutcome(dispute: Dispute, now: Date): Promise<void>;
  /** One dispute by id, whoever owns it (for the sweeper). */
  get(disputeId: string): Promise<Dispute | undefined>;
  /** One dispute of the scope, or undefined (also for another merchant's or mode's). */
  findById(scope: Scope, disputeId: string): Promise<Dispute | undefined>;
  /**
   * The scope's disputes newest first, of one order when orderId is given.
   * @throws UnknownCursorError when startingAfter is not a dispute of the scope
   */
  list(scope: Scope, query: { limit: number; startingAfter: string | undefined; orderId: string | undefined }): Promise<DisputePage>;
  /** The disputes of each order, oldest first (orders without any are absent). */
  listForOrders(orderIds: readonly string[]): Promise<Map<string, Dispute[]>>;
  /**
   * Ids of open disputes the sweeper may close: needs_response past evidence_due_by, and (test
   * mode) under_review with winning_evidence or losing_evidence in their submitted evidence.
   */
  dueToClose(now: Date, limit: number): Promise<string[]>;
  /**
   * Orders paid in test mode with their sandbox's dispute test card, captured before `capturedBefore`,
   * with something left to dispute and no dispute of the card yet.
   */
  dueTestCardDisputes(capturedBefore: Date, limit: number): Promise<string[]>;
}
