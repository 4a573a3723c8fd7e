import type { Money } from '../money/money.ts';
import { findCurrency } from '../money/currency.ts';

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

/**
 * What the merchant is credited for a paid order: the gross converted to the
 * merchant's settlement currency (or kept in the order's currency when no
 * reference rate exists), less 1.4 % and a fixed 0.25 major units, never
 * below zero. All rounding is half-up to the settlement currency's minor unit.
 */
export function computeSettlement(gross: Money, settlementCurrency: string): Money {
  const converted = convert(gross, settlementCurrency) ?? gross;
  const exponent = findCurrency(converted.currency)?.exponent ?? 2;
  const fixedFee = divRound(25n * 10n ** BigInt(exponent), 100n);
  const fee = divRound(converted.amount * FEE_BASIS_POINTS, 10_000n) + fixedFee;
  const net = converted.amount - fee;
  return { currency: converted.currency, amount: net > 0n ? net : 0n };
}
