// The GS1-Conformant resolver's answers (GS1-Conformant Resolver standard 1.2.0), built from what
// the resources return: the gs1 codes of a GTIN (qr-codes/scan-lookup.ts, cached by ./cache.ts)
// and the choice of a link (qr-codes/gs1-links.ts). This file only turns them into HTTP: status,
// headers (CORS, Link), body. The handler (./handler.ts) records the scan.
import { gs1Scope, type Gs1Entry, type Gs1ScanCode } from '../qr-codes/scan-lookup.js';
import { queryAttributeProblem, type Gs1Key, type ParsedPath } from '../qr-codes/gs1.js';
import {
  anchorOf,
  chooseLink,
  gs1Unavailable,
  GS1_VOC,
  levelsFor,
  LINKSET_CONTEXT,
  linksetOf,
  resolveNow,
} from '../qr-codes/gs1-links.js';

/** Why an item is gone (410): its codes' dates, schedule, or redirect cap. */
export const GONE = {
  not_started: 'This item is not available yet.',
  expired: 'This item is no longer available.',
  outside_schedule: 'This item is not available at this time.',
  cap_reached: 'This item has reached its limit of resolutions.',
} as const;

/** The answer when a resolution is refused after the choice (a capped code at its cap): 410, CORS, no scan. */
export function gs1Gone(reason: keyof typeof GONE): { status: number; headers: Record<string, string>; body: string } {
  return plain(410, GONE[reason]);
}

/** A redirect to a link: 307 Temporary Redirect (method and body kept; documented in docs/gs1.md). */
const GS1_REDIRECT_STATUS = 307;

const EXPOSED = 'Link, Location, Content-Type, Content-Language, Vary';

/** CORS on every answer of the resolver (the standard: SHALL support CORS). */
export const CORS: Record<string, string> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': EXPOSED,
};

/** The answer to OPTIONS (a CORS preflight or a plain OPTIONS): what the resolver allows. */
export const PREFLIGHT: Record<string, string> = {
  ...CORS,
  Allow: 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'Accept, Accept-Language, Content-Type',
  'Access-Control-Max-Age': '86400',
  'Content-Length': '0',
};

export interface Gs1Request {
  /** `<origin>/<org-slug>` on a fallback host, `https://<host>` on a custom domain. */
  stem: string;
  /** The query string without its `?` ('' when none). */
  query: string;
  accept: string | undefined;
  acceptLanguage: string | undefined;
  /** The request was a compressed URI: its uncompressed URI (anchor + attributes) is exposed as owl:sameAs. */
  compressed?: { query: string };
  /** Now: levels not begun, expired or outside their schedule do not answer. */
  now: Date;
}

export interface Gs1Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The most specific code that answered (the scan's code), or null when nothing was resolved. */
  code: Gs1ScanCode | null;
  key: Gs1Key | null;
  /** The link type asked for ('' when none) and served ('' when no link was). */
  asked: string;
  served: string;
}

const plain = (status: number, message: string, extra: Record<string, string> = {}): Gs1Answer => ({
  status,
  headers: { ...CORS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'private, max-age=0', ...extra },
  body: `${message}\n`,
  code: null,
  key: null,
  asked: '',
  served: '',
});

const LINKSET_TYPE = /application\/linkset\+json/i;

/** Whether an Accept header asks for the linkset (application/linkset+json with q > 0). */
function wantsLinkset(accept: string | undefined): boolean {
  // A browser's or a scanner's Accept does not name it: told without splitting the header.
  if (!accept || !LINKSET_TYPE.test(accept)) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.trim().split(';');
    if (type.trim().toLowerCase() !== 'application/linkset+json') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  });
}

/** The target with the request's query string passed on (every pair but linkType, which was for us). */
function withQuery(href: string, params: URLSearchParams): string {
  const passed = new URLSearchParams();
  for (const [k, v] of params) if (k !== 'linkType') passed.append(k, v);
  const q = passed.toString();
  if (!q) return href;
  const hash = href.indexOf('#');
  const [base, frag] = hash === -1 ? [href, ''] : [href.slice(0, hash), href.slice(hash)];
  return `${base}${base.includes('?') ? '&' : '?'}${q}${frag}`;
}

const linkHeader = (anchor: string, compressed?: { query: string }): string => {
  const linkset = `<${anchor}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`;
  if (!compressed) return linkset;
  return `${linkset}, <${anchor}${compressed.query ? `?${compressed.query}` : ''}>; rel="owl:sameAs"`;
};

/**
 * The answer to a Digital Link request on a domain: 400 for a syntax error, 404 for an unknown
 * key or link type, a 307 to the chosen link, 300 when several fit equally, or the linkset.
 */
export function gs1Answer(
  parsed: ParsedPath,
  entry: Gs1Entry | null,
  domain: { id: number; type: string },
  req: Gs1Request,
): Gs1Answer {
  if (parsed.kind === 'invalid') return plain(400, `Not a valid GS1 Digital Link URI: ${parsed.problem}`);
  if (parsed.kind === 'unsupported') return plain(404, parsed.problem);
  // Most requests carry no query string: nothing to check, nothing to pass on.
  const params = req.query ? new URLSearchParams(req.query) : null;
  const attrProblem = params && queryAttributeProblem(params);
  if (attrProblem) return plain(400, `Not a valid GS1 Digital Link URI: ${attrProblem}`);
  const key = parsed.key;
  // A custom domain serves only its own codes; a fallback host the organization's codes made on one.
  const scope = domain.type === 'custom' ? `domain ${domain.id}` : 'fallback';
  const covering = entry ? levelsFor(entry.codes, key).filter((c) => gs1Scope(c) === scope) : [];
  if (!covering.length) return plain(404, 'No item with this identifier on this resolver.');
  // When no level answers now, the item is gone (410), as a plain code's redirect says.
  const resolved = resolveNow(covering, req.now);
  if (!resolved) return plain(410, GONE[gs1Unavailable(covering[covering.length - 1], req.now)!]);
  const { levels, links, description, choices } = resolved;
  const anchor = anchorOf(req.stem, key);
  const code = levels[levels.length - 1];
  const link = linkHeader(anchor, req.compressed);
  const linkType = params?.get('linkType') ?? null;
  const asked = linkType ?? '';
  const choice = chooseLink(choices, {
    linkType,
    wantsLinkset: wantsLinkset(req.accept),
    acceptLanguage: req.acceptLanguage,
    context: params?.get('context') ?? null,
  });
  switch (choice.kind) {
    case 'linkset':
      return {
        status: 200,
        headers: {
          ...answerHeaders(link),
          'Content-Type': 'application/linkset+json',
          Link: `${link}, <${LINKSET_CONTEXT}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
        },
        body: JSON.stringify(linksetOf(anchor, links, description)),
        code,
        key,
        asked: asked || 'linkset',
        served: 'linkset',
      };
    case 'redirect':
      // The answer to most requests: its headers in one literal (spreading CORS into a new object showed as 4% of the profile).
      return {
        status: GS1_REDIRECT_STATUS,
        headers: {
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Expose-Headers': EXPOSED,
          Link: link,
          Vary: 'Accept, Accept-Language',
          'Cache-Control': 'private, max-age=0',
          Location: params ? withQuery(choice.link.href, params) : choice.link.href,
          'Content-Length': '0',
        },
        body: '',
        code,
        key,
        asked,
        served: choice.served,
      };
    case 'multiple':
      return {
        status: 300,
        headers: { ...answerHeaders(link), 'Content-Type': 'application/linkset+json' },
        body: JSON.stringify(linksetOf(anchor, choice.links, description)),
        code,
        key,
        asked,
        served: choice.served,
      };
    default:
      return { ...plain(404, choice.message, { Link: link }), code, key, asked };
  }
}

/** The headers of every answer about an item: CORS, the Link to its linkset, Vary, no caching. */
function answerHeaders(link: string): Record<string, string> {
  return {
    ...CORS,
    Link: link,
    Vary: 'Accept, Accept-Language',
    'Cache-Control': 'private, max-age=0',
  };
}

/**
 * The resolver description file (/.well-known/gs1resolver) of this domain, in the properties of the
 * standard's description file schema (server/qr-codes/gs1-description-file-schema.json).
 */
export function descriptionFile(resolverRoot: string, host: string): Record<string, unknown> {
  return {
    name: `GS1-Conformant resolver of ${host}`,
    resolverRoot,
    supportedPrimaryKeys: ['01'],
    supportedLinkType: [{ namespace: GS1_VOC, prefix: 'gs1:' }],
    // linkType=linkset (or all) is asked for; the default answer is the default link.
    linkTypeDefaultCanBeAll: false,
    supportsSemanticInterpretation: false,
    // Key qualifiers and data attributes are checked one by one, not as the General Specifications' AI combinations.
    validatesAIcombinations: false,
    supportsLanguageVariants: true,
  };
}
