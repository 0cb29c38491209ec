// custom_js: a code's own script (docs/pixels.md#custom-scripts). Allowed only on a code served from
// a verified (active) custom domain of its own organization, on the Enterprise plan, at most 10 KB of
// UTF-8. The redirect serves it as a separate file on that domain (CUSTOM_SCRIPT_PREFIX, never on a
// shared fallback host) and every hosted page of the code loads it with `<script src integrity>`,
// allowed by the same hash in the page's Content-Security-Policy (CSP Level 3: a hash-source matches
// an external script whose integrity metadata names it; Subresource Integrity then refuses a file
// whose bytes differ). Never inlined.
import { createHash } from 'node:crypto';
import type { JsonSchema } from '../schemas/validation.js';

/** At most this many bytes of UTF-8: 10 KB. */
export const MAX_CUSTOM_JS_BYTES = 10_240;

/** The plan feature (Enterprise). */
export const CUSTOM_JS_FEATURE = 'custom_js';

/** Where a custom domain serves scripts: `/_qr/js/<slug>.<version>.js`. Never a code's slug (it holds `_` and `/`). */
export const CUSTOM_SCRIPT_PREFIX = '/_qr/js/';

export const CustomJs: JsonSchema = {
  type: ['string', 'null'],
  minLength: 1,
  // Characters; the byte limit (UTF-8) is the service's, with a message that says bytes.
  maxLength: MAX_CUSTOM_JS_BYTES,
  description:
    `Enterprise plan. JavaScript run on the code's hosted pages (landing page, pixel page, prelander; a url code ` +
    `gets an interstitial page), served as a separate file with its SHA-384 in the page's Content-Security-Policy. ` +
    `At most ${MAX_CUSTOM_JS_BYTES} bytes of UTF-8. Only on a code whose domain is a verified (active) custom domain ` +
    `of the organization: 422 custom_js_requires_custom_domain otherwise. null: none. See docs/pixels.md.`,
};

/** The 422 message of a script over the byte limit, or null. */
export function customJsSizeProblem(js: string): string | null {
  const bytes = Buffer.byteLength(js, 'utf8');
  return bytes > MAX_CUSTOM_JS_BYTES
    ? `Must be at most ${MAX_CUSTOM_JS_BYTES} bytes of UTF-8 (10 KB); this script has ${bytes} bytes.`
    : null;
}

/** Whether a domain may serve custom_js: a custom domain that is verified (status active). */
export function servesCustomJs(domain: { type: string; status: string }): boolean {
  return domain.type === 'custom' && domain.status === 'active';
}

/** Why a code's custom_js cannot be on this domain (the 422's message), or null when it can. */
export function customJsDomainProblem(domain: { type: string; status: string; host: string }): string | null {
  if (servesCustomJs(domain)) return null;
  if (domain.type !== 'custom')
    return (
      `custom_js runs only on a verified custom domain of your organization, never on the shared host ${domain.host}: ` +
      'put the code on your own domain, or send custom_js: null.'
    );
  return (
    `custom_js runs only on a verified custom domain: ${domain.host} is ${domain.status}. Verify it first ` +
    '(POST /v1/domains/{domain_ulid}/verify), or send custom_js: null.'
  );
}

/** What the redirect needs to serve a code's script and to load it from the code's pages. */
export interface CustomScriptEntry {
  /** The file's bytes. */
  body: Buffer;
  /** `sha384-<base64>`: the page's integrity attribute and its CSP hash-source. */
  integrity: string;
  /** The file's path on the code's domain: CUSTOM_SCRIPT_PREFIX + `<slug>.<version>.js`. */
  src: string;
}

/** The script entry of a code (its public slug), built once per cached code. */
export function customScriptEntry(js: string, publicSlug: string): CustomScriptEntry {
  const body = Buffer.from(js, 'utf8');
  const digest = createHash('sha384').update(body).digest();
  // The version in the name changes with the content, so the file can be cached for good.
  const version = digest.subarray(0, 8).toString('hex');
  return {
    body,
    integrity: `sha384-${digest.toString('base64')}`,
    src: `${CUSTOM_SCRIPT_PREFIX}${publicSlug}.${version}.js`,
  };
}

/** The `<slug>.<version>.js` of a script path after CUSTOM_SCRIPT_PREFIX, or null. */
export function parseScriptName(name: string): { slug: string; version: string } | null {
  const m = /^([A-Za-z0-9_-]{1,64})\.([0-9a-f]{16})\.js$/.exec(name);
  return m ? { slug: m[1], version: m[2] } : null;
}

/**
 * A page with the code's script: `<script src integrity>` at the end of its head (it runs before the
 * page's own script, which comes after the body) and the hash added to the CSP's script-src (made
 * when the page has none). Nothing else is allowed: the CSP's other directives stay as they are.
 */
export function withCustomScript(
  html: string | Buffer,
  csp: string,
  script: CustomScriptEntry,
): { html: string; csp: string } {
  const text = typeof html === 'string' ? html : html.toString('utf8');
  const tag = `<script src="${script.src}" integrity="${script.integrity}"></script>\n`;
  const at = text.indexOf('</head>');
  const page = at === -1 ? tag + text : text.slice(0, at) + tag + text.slice(at);
  const directives = csp.split(';').map((d) => d.trim());
  const i = directives.findIndex((d) => d === 'script-src' || d.startsWith('script-src '));
  if (i === -1) directives.push(`script-src '${script.integrity}'`);
  else {
    // 'unsafe-inline' beside a hash is ignored by CSP Level 2 browsers: a page relying on it would break.
    if (directives[i].includes("'unsafe-inline'"))
      throw new Error('a page with custom_js must allow its own scripts by hash');
    directives[i] = `${directives[i]} '${script.integrity}'`;
  }
  return { html: page, csp: directives.join('; ') };
}
