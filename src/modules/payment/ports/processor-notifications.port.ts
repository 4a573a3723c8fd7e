import type { AuthorizationOutcome, OperationOutcome } from './payment-processor.port.ts';

/** A processor's notification as it arrived: the raw body is what its signature covers. */
export interface RawNotification {
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly rawBody: Buffer;
}

/** One outcome a notification reports, in our vocabulary. */
export type NotifiedOutcome =
  | { readonly flow: 'authorization'; readonly processorRef: string; readonly outcome: AuthorizationOutcome }
  | { readonly flow: 'capture' | 'refund' | 'void' | 'reversal'; readonly processorRef: string; readonly reference: string | undefined; readonly outcome: OperationOutcome };

/** A verified notification: the processor's event id (what deduplicates a redelivery) and what it reports. */
export interface ParsedNotification {
  readonly eventId: string;
  readonly outcomes: readonly NotifiedOutcome[];
  /** What the processor expects as the answer's body (Adyen: "[accepted]"). */
  readonly acknowledgement: string;
}

/** Why a notification was refused. */
export type NotificationRefusal = 'bad_signature' | 'stale' | 'malformed';

/**
 * The inbound side of a processor (Hyperswitch's IncomingWebhook): verifies a notification's
 * signature over the raw body and parses it into normalized outcomes. It keeps no state; refusing
 * a replay of an event id already processed is the receiver's job (by `eventId`), a replay outside
 * the signature's tolerance is refused here as `stale`.
 */
export interface ProcessorNotifications {
  /** The route whose notifications these are. */
  readonly route: string;
  parse(notification: RawNotification): { readonly ok: true; readonly notification: ParsedNotification } | { readonly ok: false; readonly refusal: NotificationRefusal };
}
