// The Idempotency-Key of every call that changes something on the service, derived from what Medusa passes
// (context.idempotency_key: the payment session's id when it is initiated or authorized, the capture's, the
// refund's, the payment's when it is cancelled), else from our order: a retry of the same Medusa operation,
// after a lost answer or a rolled-back workflow, reuses the key and the service answers what it already did.

/** `medusa:<session id>:create`: one order per payment session, however often Medusa retries initiatePayment. */
export function createKey(sessionKey: string): string {
  return `medusa:${sessionKey}:create`;
}

/**
 * The order that replaces one whose amount changed (updatePayment): per session, replaced order and new amount,
 * so a retry answers the same replacement and a later change makes another.
 */
export function replaceKey(sessionKey: string, replacedOrderId: string, amount: number, currency: string): string {
  return `medusa:${sessionKey}:replace:${replacedOrderId}:${amount}${currency}`;
}

/** A capture: Medusa's capture id (capt_…), else the order's one capture. */
export function captureKey(orderId: string, medusaKey: string | undefined): string {
  return medusaKey ? `medusa:${medusaKey}:capture` : `medusa:${orderId}:capture`;
}

/**
 * A refund: Medusa's refund id (ref_…). Without one there is nothing to tell a retry from a second refund of the
 * same amount, and the SDK makes a key of its own, kept across its retries of that call.
 */
export function refundKey(medusaKey: string | undefined): string | undefined {
  return medusaKey ? `medusa:${medusaKey}:refund` : undefined;
}

/** Expiring or voiding an order (cancelPayment, deletePayment): once per order, whichever asked first. */
export function releaseKey(orderId: string, how: 'expire' | 'void'): string {
  return `medusa:${orderId}:${how}`;
}
