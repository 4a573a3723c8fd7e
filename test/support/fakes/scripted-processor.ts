import type { DeclineCode } from '../../../src/modules/payment/domain/decline-code.ts';
import type { AuthorizationOutcome, AuthorizationRequest, OperationOutcome, PaymentProcessor, ProcessorCapabilities } from '../../../src/modules/payment/ports/payment-processor.port.ts';

/**
 * What a processor call can be scripted to do: approve (the default), decline with our code, not
 * answer (throw), stay pending, or, for authorize only, ask for the cardholder's authentication by a
 * redirect with a test code.
 */
export type Script = 'approve' | { readonly decline: DeclineCode } | 'unreachable' | 'pending' | { readonly challenge: string };

type Operation = 'authorize' | 'completeAuthorization' | 'capture' | 'void' | 'refund' | 'reverse' | 'sync' | 'syncRefund';

/** One call made to the processor, with its arguments. */
export interface ProcessorCall {
  readonly operation: Operation;
  readonly args: readonly unknown[];
}

/**
 * A PaymentProcessor whose answers a test chooses, operation by operation (next() for the next call
 * only, always() from then on), recording every call. Approves by default, with references
 * `<route>_<operation>_<n>`.
 */
export class ScriptedProcessor implements PaymentProcessor {
  readonly route: string;
  readonly capabilities: ProcessorCapabilities = { methods: ['card', 'wallet'], currencies: 'any', manualCapture: true, partialCapture: true, partialRefund: true };
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

  #script(operation: Operation, args: readonly unknown[]): { script: Exclude<Script, 'unreachable'>; processorRef: string } {
    this.calls.push({ operation, args });
    const script = this.#next.get(operation)?.shift() ?? this.#always.get(operation) ?? 'approve';
    if (script === 'unreachable') throw new Error(`${this.route}: ${operation} did not answer (scripted)`);
    return { script, processorRef: `${this.route}_${operation}_${++this.#refs}` };
  }

  #authorization(operation: Operation, args: readonly unknown[]): AuthorizationOutcome {
    const { script, processorRef } = this.#script(operation, args);
    if (script === 'approve') return { kind: 'approved', processorRef };
    if (script === 'pending') return { kind: 'pending', processorRef };
    if ('challenge' in script) return { kind: 'action', processorRef, redirect: { url: `https://issuer.example/3ds/${processorRef}`, method: 'GET', fields: {} }, testCode: script.challenge };
    return { kind: 'declined', declineCode: script.decline, processorCode: script.decline };
  }

  #operation(operation: Operation, args: readonly unknown[]): OperationOutcome {
    const { script, processorRef } = this.#script(operation, args);
    if (script === 'approve') return { kind: 'succeeded', processorRef };
    if (script === 'pending') return { kind: 'pending', processorRef };
    if ('challenge' in script) throw new Error(`${this.route}: only authorize may be scripted to ask for authentication, not ${operation}`);
    return { kind: 'failed', declineCode: script.decline, processorCode: script.decline };
  }

  async authorize(request: AuthorizationRequest): Promise<AuthorizationOutcome> {
    return this.#authorization('authorize', [request]);
  }

  async completeAuthorization(processorRef: string, returnParams: Readonly<Record<string, string>>): Promise<AuthorizationOutcome> {
    return this.#authorization('completeAuthorization', [processorRef, returnParams]);
  }

  async capture(processorRef: string, amount: bigint, reference: string): Promise<OperationOutcome> {
    return this.#operation('capture', [processorRef, amount, reference]);
  }

  async void(processorRef: string, reference: string): Promise<OperationOutcome> {
    return this.#operation('void', [processorRef, reference]);
  }

  async refund(captureRef: string, amount: bigint, reference: string): Promise<OperationOutcome> {
    return this.#operation('refund', [captureRef, amount, reference]);
  }

  async reverse(processorRef: string, amount: bigint, reference: string): Promise<OperationOutcome> {
    return this.#operation('reverse', [processorRef, amount, reference]);
  }

  async sync(processorRef: string): Promise<AuthorizationOutcome> {
    return this.#authorization('sync', [processorRef]);
  }

  async syncRefund(refundRef: string): Promise<OperationOutcome> {
    return this.#operation('syncRefund', [refundRef]);
  }
}
