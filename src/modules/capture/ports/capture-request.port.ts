/** A capture asked of the acquirer and not yet recorded (migration 016). */
export interface CaptureRequest {
  readonly orderId: string;
  readonly paymentId: string;
  readonly amount: bigint;
  readonly requestedAt: Date;
}

/** Capture requests, in the transaction of the change that makes or ends one. */
export interface CaptureRequests {
  /** Records a request; an order has at most one at a time. */
  add(request: CaptureRequest): Promise<void>;
  /** The order's standing request, if any. */
  find(orderId: string): Promise<CaptureRequest | undefined>;
  /** Ends the order's request (recorded, or declined by the acquirer). */
  remove(orderId: string): Promise<void>;
  /** Orders whose request has stood since before `before` (a process stopped between asking and recording). */
  stale(before: Date, limit: number): Promise<string[]>;
}
