import type { Money } from '../../../kernel/domain/money.ts';
import { findCurrency } from '../../../kernel/domain/currency.ts';

/** Percentage fee in basis points (1.4 %). */
export const FEE_BASIS_POINTS = 140n;

/**
 * Reference rates, as micro-euros per major unit, used to settle in the
 * merchant's settlement currency. Fixed so settlement is deterministic in test
 * mode; a live deployment replaces them with its acquirer's rates.
 */
export const REFERENCE_RATES_MICRO_EUR: Readonly<Record<string, bigint>> = {
  EUR: 1_000_000n,
  USD: 920_000n,
  GBP: 1_170_000n,
  CHF: 1_050_000n,
  JPY: 6_100n,
  SEK: 87_000n,
  DKK: 134_000n,
  NOK: 85_000n,
  PLN: 230_000n,
  CAD: 670_000n,
  AUD: 600_000n,
  KWD: 2_990_000n,
};

/** Integer division rounding half away from zero, for non-negative operands. */
function divRound(numerator: bigint, denominator: bigint): bigint {
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/**
 * Converts an amount to another currency at the reference rates; undefined
 * when either currency has no reference rate.
 */
export function convert(amount: Money, to: string): Money | undefined {
  if (amount.currency === to) return amount;
  const from = findCurrency(amount.currency);
  const target = findCurrency(to);
  const fromRate = REFERENCE_RATES_MICRO_EUR[amount.currency];
  const toRate = REFERENCE_RATES_MICRO_EUR[to];
  if (!from || !target || fromRate === undefined || toRate === undefined) return undefined;
  const numerator = amount.amount * fromRate * 10n ** BigInt(target.exponent);
  const denominator = toRate * 10n ** BigInt(from.exponent);
  return { currency: to, amount: divRound(numerator, denominator) };
}

/** What a paid order settles as: the gross in the settlement currency, the fees taken from it, and the net. */
export interface SettlementBreakdown {
  /** The order's gross, converted to the settlement currency (the order's own when no reference rate exists). */
  readonly gross: Money;
  /** 1.4 % of the converted gross, rounded half-up to the minor unit. */
  readonly percentageFee: bigint;
  /** 0.25 major units of the settlement currency. */
  readonly fixedFee: bigint;
  /** gross - fees, never below zero (the fees are capped at the gross). */
  readonly net: Money;
}

/**
 * What the merchant is credited for a paid order: the gross converted to the
 * merchant's settlement currency (or kept in the order's currency when no
 * reference rate exists), less 1.4 % and a fixed 0.25 major units, never
 * below zero. All rounding is half-up to the settlement currency's minor unit;
 * when the fees would exceed the gross, the fixed fee is reduced first, then
 * the percentage fee, so that percentage + fixed + net = gross exactly.
 */
export function settlementBreakdown(gross: Money, settlementCurrency: string): SettlementBreakdown {
  const converted = convert(gross, settlementCurrency) ?? gross;
  const exponent = findCurrency(converted.currency)?.exponent ?? 2;
  const fixedFee = divRound(25n * 10n ** BigInt(exponent), 100n);
  const percentageFee = divRound(converted.amount * FEE_BASIS_POINTS, 10_000n);
  const percentage = percentageFee < converted.amount ? percentageFee : converted.amount;
  const fixed = fixedFee < converted.amount - percentage ? fixedFee : converted.amount - percentage;
  return { gross: converted, percentageFee: percentage, fixedFee: fixed, net: { currency: converted.currency, amount: converted.amount - percentage - fixed } };
}

/** The net of {@link settlementBreakdown}: what the merchant is credited for a paid order. */
export function computeSettlement(gross: Money, settlementCurrency: string): Money {
  return settlementBreakdown(gross, settlementCurrency).net;
}
