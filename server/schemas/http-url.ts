// The one rule for every http(s) URL the service accepts (code destinations, routing rules and
// variants, schedule fallbacks, domain root and not-found redirects, URL keys of brand settings):
// parsed as a browser does (WHATWG URL) and stored in its serialised form, so what is stored is
// exactly what the redirect sends. That form is plain ASCII: the host in punycode, the path, query
// and fragment percent-encoded. A pure module: no I/O, no state.
import { isIPv4 } from 'node:net';
import { ApiError } from '../errors.js';
import { dnsLengthOk, idnaToAscii } from './idna.js';

export const MAX_URL_LENGTH = 2048;

/** The JSON Schema pattern every URL field carries before this check (a cheap first gate). */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://';

export type UrlCheck = { ok: true; url: string } | { ok: false; problem: string };

// C0 controls, DEL and C1 controls. A browser would drop some of them silently (tab, newline) and
// encode the others; either way the URL is not the one the user meant, so it is refused.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
const WHITESPACE = /\s/;

const INVALID = 'Must be a valid http or https URL, e.g. https://example.com/page.';

const refuse = (problem: string): UrlCheck => ({ ok: false, problem });

/**
 * The normalised form of an absolute http or https URL, or why it is refused: not a string, empty,
 * longer than 2048 characters (before or after normalisation), control characters, whitespace,
 * unparsable, another scheme, a user name or password in it, port 0, or a domain name whose labels
 * break the IDNA and DNS rules (./idna.ts: an empty label, a leading or trailing hyphen, invalid
 * Punycode, a label over 63 characters). The host is judged by those rules rather than by the
 * runtime's URL parser alone, so every supported Node release gives the same answer.
 */
export function normaliseHttpUrl(value: unknown): UrlCheck {
  if (typeof value !== 'string' || value === '') return refuse('Must be an http or https URL.');
  if (value.length > MAX_URL_LENGTH)
    return refuse(`Must be an http or https URL of at most ${MAX_URL_LENGTH} characters.`);
  if (CONTROL.test(value)) return refuse('Must be an http or https URL without control characters.');
  if (WHITESPACE.test(value)) return refuse('Must be an http or https URL without spaces (write a space as %20).');
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return refuse(INVALID);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return refuse('Must be an http or https URL.');
  if (parsed.username || parsed.password)
    return refuse('Must be an http or https URL without a user name or password.');
  if (parsed.port === '0') return refuse('Must be an http or https URL with a port from 1 to 65535.');
  // The same words as an unparsable URL: which of the two refuses a bad label depends on the Node release.
  if (!hostOk(parsed.hostname)) return refuse(INVALID);
  const url = parsed.href;
  if (url.length > MAX_URL_LENGTH) {
    return refuse(
      `Must be an http or https URL of at most ${MAX_URL_LENGTH} characters once normalised ` +
        '(each non-ASCII character is percent-encoded as 3 to 12 characters).',
    );
  }
  return { ok: true, url };
}

/** An IP address as the parser wrote it, or a domain name that IDNA and DNS accept unchanged. */
function hostOk(hostname: string): boolean {
  if (hostname.startsWith('[') || isIPv4(hostname)) return true;
  const ascii = idnaToAscii(hostname);
  return ascii === hostname && dnsLengthOk(ascii);
}

/** The normalised URL, or null when it is refused (for values read back from storage). */
export function httpUrlOrNull(value: unknown): string | null {
  const check = normaliseHttpUrl(value);
  return check.ok ? check.url : null;
}

/** The normalised URL of a field, or a 422 on that field naming what is accepted. */
export function requireHttpUrl(field: string, value: unknown): string {
  const check = normaliseHttpUrl(value);
  if (!check.ok) throw ApiError.field(field, check.problem);
  return check.url;
}
