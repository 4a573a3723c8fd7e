// The four values of @medusajs/framework/utils this package uses, declared for the repository's typecheck and
// the package's build only (tsconfig `paths`), so that `npm ci` need not install Medusa's framework (a thousand
// packages) for them. Their types are Medusa's own, from @medusajs/types (a devDependency). The built package
// imports the real @medusajs/framework/utils, its peer: test/medusa-plugin.test.ts checks the packed .d.ts against
// it in a strict TypeScript project and runs the provider in a real Medusa server.
import type { IPaymentProvider, ModuleProviderExports } from '@medusajs/types';

/** Medusa's base class of payment providers (@medusajs/utils' abstract-payment-provider.d.ts, 2.x). */
export declare abstract class AbstractPaymentProvider<TConfig = Record<string, unknown>> implements IPaymentProvider {
  protected readonly config: TConfig;
  protected readonly container: Record<string, unknown>;
  static validateOptions(options: Record<string, unknown>): void | never;
  protected constructor(cradle: Record<string, unknown>, config?: TConfig);
  static _isPaymentProvider: boolean;
  static isPaymentProvider(object: unknown): boolean;
  static identifier: string;
  getIdentifier(): string;
  abstract capturePayment(...args: Parameters<IPaymentProvider['capturePayment']>): ReturnType<IPaymentProvider['capturePayment']>;
  abstract authorizePayment(...args: Parameters<IPaymentProvider['authorizePayment']>): ReturnType<IPaymentProvider['authorizePayment']>;
  abstract cancelPayment(...args: Parameters<IPaymentProvider['cancelPayment']>): ReturnType<IPaymentProvider['cancelPayment']>;
  abstract initiatePayment(...args: Parameters<IPaymentProvider['initiatePayment']>): ReturnType<IPaymentProvider['initiatePayment']>;
  abstract deletePayment(...args: Parameters<IPaymentProvider['deletePayment']>): ReturnType<IPaymentProvider['deletePayment']>;
  abstract getPaymentStatus(...args: Parameters<IPaymentProvider['getPaymentStatus']>): ReturnType<IPaymentProvider['getPaymentStatus']>;
  abstract refundPayment(...args: Parameters<IPaymentProvider['refundPayment']>): ReturnType<IPaymentProvider['refundPayment']>;
  abstract retrievePayment(...args: Parameters<IPaymentProvider['retrievePayment']>): ReturnType<IPaymentProvider['retrievePayment']>;
  abstract updatePayment(...args: Parameters<IPaymentProvider['updatePayment']>): ReturnType<IPaymentProvider['updatePayment']>;
  abstract getWebhookActionAndData(...args: Parameters<IPaymentProvider['getWebhookActionAndData']>): ReturnType<IPaymentProvider['getWebhookActionAndData']>;
}

/** Wraps a provider's services as a module provider export (@medusajs/utils' modules-sdk/module-provider.d.ts). */
export declare function ModuleProvider(serviceName: string, { services, loaders }: ModuleProviderExports): ModuleProviderExports;

/** The module names (@medusajs/utils' modules-sdk/definition.d.ts): only the payment module's here. */
export declare const Modules: { readonly PAYMENT: 'payment' };

/** Medusa's error, whose type its HTTP layer turns into a status (@medusajs/utils' common/errors.d.ts). */
export declare class MedusaError extends Error {
  __isMedusaError: boolean;
  type: string;
  code?: string;
  date: Date;
  static Types: {
    INVALID_DATA: string;
    NOT_ALLOWED: string;
    NOT_FOUND: string;
    UNEXPECTED_STATE: string;
    PAYMENT_AUTHORIZATION_ERROR: string;
    PAYMENT_REQUIRES_MORE_ERROR: string;
  };
  constructor(type: string, message: string, code?: string, ...params: unknown[]);
}
