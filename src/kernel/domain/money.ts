import { DomainError, invalid } from './domain-error.ts';
import { findCurrency, type Currency } from './currency.ts';

/** An amount in integer minor units of a currency. Never a float. */
export interface Money {
  readonly amount: bigint;
  readonly currency: string;
}

/**
 * Parses a currency code as sent by a caller.
 * @throws DomainError money.currency_invalid when the code is not an uppercase active ISO 4217 code.
 */
export function parseCurrency(code: string, param = 'currency'): Currency {
  const currency = /^[A-Z]{3}$/.test(code) ? findCurrency(code) : undefined;
  if (!currency) {
    const hint = /^[a-z]{3}$/.test(code) && findCurrency(code.toUpperCase()) ? ` Did you mean "${code.toUpperCase()}"?` : '';
    throw invalid('money.currency_invalid', param, `"${code}" is not a supported ISO 4217 currency code; send three uppercase letters such as "EUR".${hint}`);
  }
  return currency;
}

/**
 * Checks a positive order total against the currency's bounds.
 * @throws DomainError money.amount_invalid or money.amount_too_large
 */
export function parsePositiveAmount(amount: bigint, currency: Currency, param = 'amount'): bigint {
  if (amount <= 0n) {
    throw invalid('money.amount_invalid', param, `amount must be a positive integer in minor units of ${currency.code} (got ${amount}).`);
  }
  return checkUpperBound(amount, currency, param);
}

/**
 * Checks a non-negative amount (a line item may be free) against the currency's bounds.
 * @throws DomainError money.amount_invalid or money.amount_too_large
 */
export function parseNonNegativeAmount(amount: bigint, currency: Currency, param: string): bigint {
  if (amount < 0n) {
    throw invalid('money.amount_invalid', param, `${param} must be zero or a positive integer in minor units of ${currency.code}.`);
  }
  return checkUpperBound(amount, currency, param);
}

function checkUpperBound(amount: bigint, currency: Currency, param: string): bigint {
  if (amount > currency.maxMinor) {
    throw new DomainError(
      'money.amount_too_large',
      `${param} ${amount} exceeds the largest ${currency.code} amount, ${currency.maxMinor} minor units (${currency.exponent} decimal places).`,
      param,
    );
  }
  return amount;
}
