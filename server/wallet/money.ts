// Money is stored as integer minor units and rendered as a decimal string with the currency's
// ISO 4217 exponent (EUR "12.34", JPY "1234", KWD "1.234").

const EXPONENT_0 = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'.split(' ');
const EXPONENT_3 = 'BHD IQD JOD KWD LYD OMR TND'.split(' ');
const EXPONENT_4 = 'CLF UYW'.split(' ');
const KNOWN: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

export function isCurrency(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && KNOWN.has(code);
}

export function currencyExponent(currency: string): number {
  if (EXPONENT_0.includes(currency)) return 0;
  if (EXPONENT_3.includes(currency)) return 3;
  if (EXPONENT_4.includes(currency)) return 4;
  return 2;
}

export function formatMinor(minor: number | bigint, currency: string): string {
  const exp = currencyExponent(currency);
  const value = BigInt(minor);
  const sign = value < 0n ? '-' : '';
  const digits = (value < 0n ? -value : value).toString().padStart(exp + 1, '0');
  if (exp === 0) return sign + digits;
  return `${sign}${digits.slice(0, -exp)}.${digits.slice(-exp)}`;
}

/** Parses a decimal amount ("12.5") into minor units; null if it has more decimals than allowed. */
export function parseAmount(amount: string, currency: string): number | null {
  const exp = currencyExponent(currency);
  const m = /^(\d{1,15})(?:\.(\d+))?$/.exec(amount.trim());
  if (!m) return null;
  const frac = m[2] ?? '';
  if (frac.length > exp) return null;
  return Number(m[1]) * 10 ** exp + Number(frac.padEnd(exp, '0') || '0');
}
