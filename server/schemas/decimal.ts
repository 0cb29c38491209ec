// The one reading of an integer written as text (query strings, path parameters, environment
// variables, CLI options): decimal digits with an optional minus sign, nothing else. `0x7`, ` 7`,
// `7.0`, `7e0` and `+7` are not integers here, although Number() would read them as 7.

const DECIMAL_INTEGER = /^-?[0-9]+$/;

/** The integer a text holds, or null when it is not decimal digits or not a safe integer. */
export function parseDecimalInteger(text: string): number | null {
  if (!DECIMAL_INTEGER.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}
