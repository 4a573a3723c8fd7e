import type { DeclineCode } from '../../../src/modules/payment/domain/decline-code.ts';
import type { AuthorizationRequest, AuthorizationResult, PaymentProcessor, SettleResult } from '../../../src/modules/payment/ports/payment-processor.port.ts';

/**
 * What a processor call can be scripted to do: approve (the default), decline with a code, not answer
 * (throw), or, for authorize only, ask for the cardholder's authentication with a test code.
 */
export type Script = 'approve' | { readonly decline: DeclineCode } | 'unreachable' | { readonly challenge: string };

type Operation = 'authorize' | 'completeAuthentication' | 'capture' | 'void' | 'refund' | 'reverse';

/** One call made to the processor, with its arguments. */
export interface ProcessorCall {
  readonly operation: Operation;
  readonly args: readonly unknown[];
}

/**
 * A PaymentProcessor whose answers a test chooses, operation by operation (next() for the next call
 * only, always() from then on), recording every call. It speaks today's port; when the port changes
 * (issue 21, point 3) this fake follows it.
 */
export class ScriptedProcessor implements PaymentProcessor {
  readonly route: string;
  readonly calls: ProcessorCall[] = [];
  readonly #next = new Map<Operation, Script[]>();
  readonly #always = new Map<Operation, Script>();
  #refs = 0;

  constructor(route = 'scripted_primary') {
    this.route = route;
  }

  /** The next call of `operation` answers `script`; later ones as before. */
  next(operation: Operation, script: Script): this {
    this.#next.set(operation, [...(this.#next.get(operation) ?? []), script]);
    return this;
  }

  /** Every later call of `operation` answers `script`. */
  always(operation: Operation, script: Script): this {
    this.#always.set(operation, script);
    return this;
  }

  /** The calls of one operation. */
  callsOf(operation: Operation): ProcessorCall[] {
    return this.calls.filter((c) => c.operation === operation);
  }

  #answer(operation: Operation, args: readonly unknown[]): AuthorizationResult {
    this.calls.push({ operation, args });
    const queued = this.#next.get(operation);
    const script = queued?.shift() ?? this.#always.get(operation) ?? 'approve';
    if (script === 'unreachable') throw new Error(`${this.route}: ${operation} did not answer (scripted)`);
    const processorRef = `${this.route}_${operation}_${++this.#refs}`;
    if (script === 'approve') return { kind: 'approved', processorRef };
    if ('challenge' in script) return { kind: 'authentication_required', processorRef, testCode: script.challenge };
    return { kind: 'declined', declineCode: script.decline };
  }

  /** The answer of an operation that settles: a challenge is authorize's alone. */
  #settle(operation: Exclude<Operation, 'authorize'>, args: readonly unknown[]): SettleResult {
    const answer = this.#answer(operation, args);
    if (answer.kind === 'authentication_required') throw new Error(`${this.route}: only authorize may be scripted to ask for authentication, not ${operation}`);
    return answer;
  }

  async authorize(request: AuthorizationRequest): Promise<AuthorizationResult> {
    return this.#answer('authorize', [request]);
  }

  async completeAuthentication(processorRef: string, code: string): Promise<SettleResult> {
    return this.#settle('completeAuthentication', [processorRef, code]);
  }

  async capture(processorRef: string, amount: bigint): Promise<SettleResult> {
    return this.#settle('capture', [processorRef, amount]);
  }

  async void(processorRef: string): Promise<SettleResult> {
    return this.#settle('void', [processorRef]);
  }

  async refund(captureRef: string, amount: bigint, reference: string): Promise<SettleResult> {
    return this.#settle('refund', [captureRef, amount, reference]);
  }

  async reverse(processorRef: string, amount: bigint, reference: string): Promise<SettleResult> {
    return this.#settle('reverse', [processorRef, amount, reference]);
  }
}
