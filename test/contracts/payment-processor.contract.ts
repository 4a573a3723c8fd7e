import { describe, expect, it } from 'vitest';
import type { Card } from '../../src/modules/payment/domain/card.ts';
import type { DeclineCode } from '../../src/modules/payment/domain/decline-code.ts';
import type { AuthorizationOutcome, AuthorizationRequest, PaymentProcessor, RedirectAction } from '../../src/modules/payment/ports/payment-processor.port.ts';
import type { ProcessorNotifications, RawNotification } from '../../src/modules/payment/ports/processor-notifications.port.ts';

/** The test cards a processor's sandbox offers, by what the contract expects of them. */
export type ContractCard = 'approved' | 'challenge' | 'soft_decline' | 'hard_decline' | 'unknown';

/**
 * One PaymentProcessor adapter under the contract: the simulator's instances now, each real
 * processor's (against its sandbox or a local stand-in) next. The harness knows how to drive what
 * only a browser or the processor's side can: follow a redirect and answer the challenge, send a
 * signed notification.
 */
export interface ProcessorUnderTest {
  readonly name: string;
  readonly processor: PaymentProcessor;
  readonly notifications: ProcessorNotifications;
  readonly merchantId: string;
  card(kind: ContractCard): Card;
  /** What this route answers to the soft-decline card: approved (the alternative route) or a decline code. */
  readonly softDecline: 'approved' | DeclineCode;
  /** Follows a redirect as the customer's browser would, passes or fails the challenge, and answers the return leg's parameters. */
  followRedirect(redirect: RedirectAction, answer: 'pass' | 'fail'): Promise<Record<string, string>>;
  /** A notification as the processor sends it (signed), reporting `code` (in the processor's vocabulary) for a flow. */
  notification(event: { readonly id: string; readonly flow: 'authorization' | 'capture' | 'refund' | 'void'; readonly processorRef: string; readonly code: string; readonly reference?: string }, options?: { readonly signedAgo?: number; readonly tamper?: boolean }): RawNotification;
  /** Every code of the processor's table with what it must mean to us, plus a code it never sends. */
  readonly codes: { readonly approved: string; readonly pending: string; readonly declined: ReadonlyArray<readonly [string, DeclineCode]>; readonly unknown: string };
}

const RETURN_URL = 'http://127.0.0.1:9/c/contract/return/att_contract';

/** Runs the PaymentProcessor contract against one adapter. */
export function paymentProcessorContract(make: () => ProcessorUnderTest): void {
  const t = make();
  let n = 0;
  const request = (card: Card | undefined, overrides: Partial<AuthorizationRequest> = {}): AuthorizationRequest => {
    n += 1;
    return { attemptId: `att_contract_${n}`, merchantId: t.merchantId, livemode: false, amount: 2500n, currency: 'EUR', card, returnUrl: RETURN_URL, reference: `att_contract_${n}`, ...overrides };
  };
  const approvedRef = async (): Promise<string> => {
    const answer = await t.processor.authorize(request(t.card('approved')));
    if (answer.kind !== 'approved') throw new Error(`expected approved, got ${answer.kind}`);
    return answer.processorRef;
  };
  const challenged = async (): Promise<Extract<AuthorizationOutcome, { kind: 'action' }>> => {
    const answer = await t.processor.authorize(request(t.card('challenge')));
    if (answer.kind !== 'action') throw new Error(`expected action, got ${answer.kind}`);
    return answer;
  };

  describe(`PaymentProcessor contract: ${t.name}`, () => {
    it('declares its capabilities', () => {
      expect(t.processor.route).toBe(t.name);
      expect(t.processor.capabilities.methods).toContain('card');
      const { currencies } = t.processor.capabilities;
      expect(currencies === 'any' || currencies.every((c) => /^[A-Z]{3}$/.test(c))).toBe(true);
    });

    describe('authorize, one outcome per test card', () => {
      it('approves the approved card, with a reference', async () => {
        expect(await t.processor.authorize(request(t.card('approved')))).toMatchObject({ kind: 'approved', processorRef: expect.any(String) });
      });
      it('declines the hard-decline card as expired, in our code, keeping its own', async () => {
        const answer = await t.processor.authorize(request(t.card('hard_decline')));
        expect(answer).toMatchObject({ kind: 'declined', declineCode: 'expired_card', processorCode: expect.any(String) });
      });
      it('answers the soft-decline card as its route does', async () => {
        const answer = await t.processor.authorize(request(t.card('soft_decline')));
        if (t.softDecline === 'approved') expect(answer.kind).toBe('approved');
        else expect(answer).toMatchObject({ kind: 'declined', declineCode: t.softDecline });
      });
      it('declines a card that is not one of the sandbox test cards', async () => {
        expect(await t.processor.authorize(request(t.card('unknown')))).toMatchObject({ kind: 'declined', declineCode: 'test_card_unknown' });
      });
      it('sends the challenge card to a redirect that comes back to the return URL', async () => {
        const answer = await challenged();
        expect(answer.redirect.method === 'GET' || answer.redirect.method === 'POST').toBe(true);
        expect(() => new URL(answer.redirect.url)).not.toThrow();
      });
      it('gives each authorization its own reference', async () => {
        const [a, b] = await Promise.all([approvedRef(), approvedRef()]);
        expect(a).not.toBe(b);
      });
    });

    describe('the redirect round trip', () => {
      it('approves when the challenge passes', async () => {
        const action = await challenged();
        const params = await t.followRedirect(action.redirect, 'pass');
        expect(await t.processor.completeAuthorization(action.processorRef, params)).toMatchObject({ kind: 'approved', processorRef: action.processorRef });
      });
      it('declines as authentication_failed when it fails', async () => {
        const action = await challenged();
        const params = await t.followRedirect(action.redirect, 'fail');
        expect(await t.processor.completeAuthorization(action.processorRef, params)).toMatchObject({ kind: 'declined', declineCode: 'authentication_failed' });
      });
      it('never approves parameters that were altered or belong to another payment', async () => {
        const action = await challenged();
        const other = await challenged();
        const params = await t.followRedirect(action.redirect, 'pass');
        expect((await t.processor.completeAuthorization(other.processorRef, params)).kind).not.toBe('approved');
        const failed = await t.followRedirect(action.redirect, 'fail');
        const forged = { ...failed, ...Object.fromEntries(Object.entries(failed).map(([k, v]) => [k, v === 'failed' ? 'passed' : v])) };
        expect((await t.processor.completeAuthorization(action.processorRef, forged)).kind).not.toBe('approved');
        expect((await t.processor.completeAuthorization(action.processorRef, {})).kind).not.toBe('approved');
      });
    });

    describe('capture, refund, void, sync', () => {
      it('captures in part, then refunds in part twice', async () => {
        const ref = await approvedRef();
        expect(t.processor.capabilities.partialCapture && t.processor.capabilities.partialRefund).toBe(true);
        const captured = await t.processor.capture(ref, 1500n, `${ref}/capture`);
        expect(captured).toMatchObject({ kind: expect.stringMatching(/^(succeeded|pending)$/) });
        if (captured.kind === 'failed') return;
        const first = await t.processor.refund(captured.processorRef, 500n, 'rf_contract_1');
        const second = await t.processor.refund(captured.processorRef, 700n, 'rf_contract_2');
        expect(first.kind).not.toBe('failed');
        expect(second.kind).not.toBe('failed');
        if (first.kind !== 'failed' && second.kind !== 'failed') expect(first.processorRef).not.toBe(second.processorRef);
      });
      it('answers a repeated refund with the same reference as the first, refunding nothing more', async () => {
        const ref = await approvedRef();
        const captured = await t.processor.capture(ref, 2500n, `${ref}/capture`);
        if (captured.kind === 'failed') throw new Error('capture failed');
        const once = await t.processor.refund(captured.processorRef, 500n, 'rf_contract_repeat');
        expect(await t.processor.refund(captured.processorRef, 500n, 'rf_contract_repeat')).toEqual(once);
      });
      it('voids an uncaptured authorization', async () => {
        const ref = await approvedRef();
        expect((await t.processor.void(ref, `${ref}/void`)).kind).not.toBe('failed');
      });
      it('reverses a captured payment', async () => {
        const ref = await approvedRef();
        await t.processor.capture(ref, 2500n, `${ref}/capture`);
        expect((await t.processor.reverse(ref, 2500n, `${ref}/reverse`)).kind).not.toBe('failed');
      });
      it('syncs an authorization to what it answered, and one it never gave to pending', async () => {
        const ref = await approvedRef();
        expect(await t.processor.sync(ref)).toMatchObject({ kind: 'approved', processorRef: ref });
        expect(await t.processor.sync(`${ref}-never-given`)).toMatchObject({ kind: 'pending' });
      });
      it('syncs a refund', async () => {
        const ref = await approvedRef();
        const captured = await t.processor.capture(ref, 2500n, `${ref}/capture`);
        if (captured.kind === 'failed') throw new Error('capture failed');
        const refunded = await t.processor.refund(captured.processorRef, 100n, 'rf_contract_sync');
        if (refunded.kind === 'failed') throw new Error('refund failed');
        expect((await t.processor.syncRefund(refunded.processorRef)).kind).toMatch(/^(succeeded|pending)$/);
      });
    });

    describe('notifications', () => {
      it('verifies and parses a signed notification into our outcomes, with the processor\'s event id', async () => {
        const ref = await approvedRef();
        const parsed = t.notifications.parse(t.notification({ id: 'evt_contract_1', flow: 'authorization', processorRef: ref, code: t.codes.approved }));
        expect(parsed).toMatchObject({ ok: true, notification: { eventId: 'evt_contract_1', outcomes: [{ flow: 'authorization', processorRef: ref, outcome: { kind: 'approved' } }] } });
        const refund = t.notifications.parse(t.notification({ id: 'evt_contract_2', flow: 'refund', processorRef: ref, code: t.codes.declined[0]![0], reference: 'rf_x' }));
        expect(refund).toMatchObject({ ok: true, notification: { outcomes: [{ flow: 'refund', reference: 'rf_x', outcome: { kind: 'failed', declineCode: t.codes.declined[0]![1] } }] } });
      });
      it('refuses a bad signature', () => {
        expect(t.notifications.parse(t.notification({ id: 'evt_bad', flow: 'capture', processorRef: 'x', code: t.codes.approved }, { tamper: true }))).toEqual({ ok: false, refusal: 'bad_signature' });
      });
      it('refuses a replay signed long ago', () => {
        expect(t.notifications.parse(t.notification({ id: 'evt_old', flow: 'capture', processorRef: 'x', code: t.codes.approved }, { signedAgo: 3600 }))).toEqual({ ok: false, refusal: 'stale' });
      });
      it('answers the same event id for a redelivery (the receiver deduplicates by it)', () => {
        const event = { id: 'evt_again', flow: 'capture' as const, processorRef: 'x', code: t.codes.approved };
        const a = t.notifications.parse(t.notification(event));
        const b = t.notifications.parse(t.notification(event));
        expect(a.ok && b.ok && a.notification.eventId === b.notification.eventId).toBe(true);
      });
    });

    describe('codes', () => {
      it('maps every decline code to ours, approved to approved, pending to pending', () => {
        const outcome = (code: string) => {
          const parsed = t.notifications.parse(t.notification({ id: `evt_code_${code}`, flow: 'authorization', processorRef: 'ref_codes', code }));
          if (!parsed.ok || parsed.notification.outcomes[0]!.flow !== 'authorization') throw new Error('not parsed');
          return parsed.notification.outcomes[0]!.outcome;
        };
        expect(outcome(t.codes.approved).kind).toBe('approved');
        expect(outcome(t.codes.pending).kind).toBe('pending');
        for (const [code, ours] of t.codes.declined) expect(outcome(code)).toMatchObject({ kind: 'declined', declineCode: ours, processorCode: code });
      });
      it('reads a code it does not know as pending, never approved', () => {
        const parsed = t.notifications.parse(t.notification({ id: 'evt_unknown_code', flow: 'authorization', processorRef: 'ref_unknown', code: t.codes.unknown }));
        expect(parsed).toMatchObject({ ok: true, notification: { outcomes: [{ outcome: { kind: 'pending' } }] } });
      });
    });
  });
}
