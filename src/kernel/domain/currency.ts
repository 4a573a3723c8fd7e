/**
 * ISO 4217 active currency codes and their minor-unit exponents.
 * Codes absent from the exponent overrides have two decimal places.
 */
const ACTIVE_CODES = (
  'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD ' +
  'CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP ' +
  'GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR ' +
  'KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN ' +
  'MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD ' +
  'SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX ' +
  'USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG'
).split(' ');

const EXPONENT_OVERRIDES: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0,
  UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

const EXPONENTS: ReadonlyMap<string, number> = new Map(
  ACTIVE_CODES.map((code) => [code, EXPONENT_OVERRIDES[code] ?? 2]),
);

/** The largest amount we accept, in major units, for every currency. */
export const MAX_MAJOR_UNITS = 999_999_999n;

/** A known ISO 4217 currency with its exponent (number of minor-unit digits). */
export interface Currency {
  readonly code: string;
  readonly exponent: number;
  /** Largest accepted amount in minor units: 999,999,999 major units, all minor digits set. */
  readonly maxMinor: bigint;
}

/** Looks up an uppercase ISO 4217 code; undefined when it is not an active currency. */
export function findCurrency(code: string): Currency | undefined {
  const exponent = EXPONENTS.get(code);
  if (exponent === undefined) return undefined;
  return { code, exponent, maxMinor: (MAX_MAJOR_UNITS + 1n) * 10n ** BigInt(exponent) - 1n };
}
