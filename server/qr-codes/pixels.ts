// Tracking pixels: the one table of providers. For each: the form of its id (checked by the request
// schemas, with a message naming the expected form), the hosts its standard snippet loads from and
// sends to (the pixel page's Content-Security-Policy allows exactly these), and the snippet itself.
// The snippets are the providers' own base codes, reduced to the page view they send; the ids reach
// them only as JSON string literals, and the ids' patterns admit no quote, backslash or angle bracket.
import { createHash } from 'node:crypto';
import { normaliseHttpUrl } from '../schemas/http-url.js';
import { patterned, type JsonSchema } from '../schemas/validation.js';

export const PIXEL_PROVIDERS = ['meta', 'ga4', 'google_ads', 'linkedin', 'tiktok', 'x', 'pinterest', 'custom'] as const;
export type PixelProvider = (typeof PIXEL_PROVIDERS)[number];

export interface TrackingPixel {
  provider: PixelProvider;
  id: string;
}

/** At most this many pixels on a code or a brand. */
const MAX_PIXELS = 10;

/** The CSP fetch directives a provider needs, each a list of https sources. */
interface PixelHosts {
  script: string[];
  img: string[];
  connect: string[];
  frame: string[];
}

interface ProviderDef {
  /** The id's pattern, anchored. */
  pattern: string;
  /** What an id must look like: the 422 message. */
  form: string;
  example: string;
  hosts: (id: string) => PixelHosts;
  /** The provider's base code for one id, as JavaScript (the id as a JSON literal `i`). */
  snippet: (i: string) => string;
}

const GTAG = (i: string) =>
  `(function(){var s=document.createElement('script');s.async=true;s.src='https://www.googletagmanager.com/gtag/js?id='+encodeURIComponent(${i});document.head.appendChild(s);` +
  `window.dataLayer=window.dataLayer||[];window.gtag=window.gtag||function(){dataLayer.push(arguments);};gtag('js',new Date());gtag('config',${i});})();`;

const none: string[] = [];

const PROVIDERS: Record<PixelProvider, ProviderDef> = {
  // Meta Pixel base code (developers.facebook.com/docs/meta-pixel/get-started): fbevents.js from
  // connect.facebook.net, events to www.facebook.com/tr. Pixel ids are 15 or 16 digits.
  meta: {
    pattern: '^[0-9]{15,16}$',
    form: 'a Meta pixel id: 15 or 16 digits, e.g. 123456789012345',
    example: '123456789012345',
    hosts: () => ({
      script: ['https://connect.facebook.net'],
      img: ['https://www.facebook.com'],
      connect: ['https://www.facebook.com', 'https://connect.facebook.net'],
      frame: none,
    }),
    snippet: (i) =>
      `!function(f,b,e,v,n,t,s){if(f.fbq)return;n=f.fbq=function(){n.callMethod?n.callMethod.apply(n,arguments):n.queue.push(arguments)};` +
      `if(!f._fbq)f._fbq=n;n.push=n;n.loaded=!0;n.version='2.0';n.queue=[];t=b.createElement(e);t.async=!0;t.src=v;` +
      `s=b.getElementsByTagName(e)[0];s.parentNode.insertBefore(t,s)}(window,document,'script','https://connect.facebook.net/en_US/fbevents.js');` +
      `fbq('init',${i});fbq('track','PageView');`,
  },
  // Google tag (gtag.js) with a GA4 measurement id; hosts from Google's CSP guide for Google Analytics 4.
  ga4: {
    pattern: '^G-[A-Z0-9]{4,16}$',
    form: 'a GA4 measurement id: G- and 4 to 16 capital letters or digits, e.g. G-A1B2C3D4E5',
    example: 'G-A1B2C3D4E5',
    hosts: () => ({
      script: ['https://*.googletagmanager.com'],
      img: ['https://*.google-analytics.com', 'https://*.googletagmanager.com'],
      connect: ['https://*.google-analytics.com', 'https://*.analytics.google.com', 'https://*.googletagmanager.com'],
      frame: none,
    }),
    snippet: GTAG,
  },
  // Google tag with a Google Ads conversion id (AW-…), optionally /label for a conversion event;
  // hosts from Google's CSP guide for Google Ads conversions and remarketing.
  google_ads: {
    pattern: '^AW-[0-9]{6,12}(/[A-Za-z0-9_-]{1,64})?$',
    form: 'a Google Ads tag id: AW- and 6 to 12 digits, optionally /<conversion label>, e.g. AW-123456789 or AW-123456789/AbC-D_efG',
    example: 'AW-123456789',
    hosts: () => ({
      script: [
        'https://www.googletagmanager.com',
        'https://www.googleadservices.com',
        'https://googleads.g.doubleclick.net',
      ],
      img: ['https://www.googletagmanager.com', 'https://googleads.g.doubleclick.net', 'https://www.google.com'],
      connect: ['https://www.google.com', 'https://googleads.g.doubleclick.net', 'https://www.googleadservices.com'],
      frame: ['https://td.doubleclick.net', 'https://bid.g.doubleclick.net'],
    }),
    snippet: (i) =>
      `(function(id){var tag=id.split('/')[0];${GTAG('tag')}if(id.indexOf('/')>0)gtag('event','conversion',{send_to:id});})(${i});`,
  },
  // LinkedIn Insight Tag: insight.min.js from snap.licdn.com, requests to px.ads.linkedin.com.
  linkedin: {
    pattern: '^[0-9]{4,10}$',
    form: 'a LinkedIn Insight Tag partner id: 4 to 10 digits, e.g. 1234567',
    example: '1234567',
    hosts: () => ({
      script: ['https://snap.licdn.com'],
      img: ['https://px.ads.linkedin.com'],
      connect: ['https://px.ads.linkedin.com'],
      frame: none,
    }),
    snippet: (i) =>
      `window._linkedin_data_partner_ids=window._linkedin_data_partner_ids||[];window._linkedin_data_partner_ids.push(${i});` +
      `(function(l){if(!l){window.lintrk=function(a,b){window.lintrk.q.push([a,b])};window.lintrk.q=[]}var s=document.getElementsByTagName('script')[0];` +
      `var b=document.createElement('script');b.async=true;b.src='https://snap.licdn.com/li.lms-analytics/insight.min.js';s.parentNode.insertBefore(b,s);})(window.lintrk);`,
  },
  // TikTok Pixel base code: events.js from analytics.tiktok.com, events to the same host.
  tiktok: {
    pattern: '^[A-Z0-9]{20}$',
    form: 'a TikTok pixel id: 20 capital letters or digits, e.g. C4A1B2C3D4E5F6G7H8I9',
    example: 'C4A1B2C3D4E5F6G7H8I9',
    hosts: () => ({
      script: ['https://analytics.tiktok.com'],
      img: ['https://analytics.tiktok.com'],
      connect: ['https://analytics.tiktok.com'],
      frame: none,
    }),
    snippet: (i) =>
      `!function(w,d,t){w.TiktokAnalyticsObject=t;var ttq=w[t]=w[t]||[];ttq.methods=['page','track','identify','instances','debug','on','off','once','ready','alias','group','enableCookie','disableCookie'];` +
      `ttq.setAndDefer=function(t,e){t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}};for(var i=0;i<ttq.methods.length;i++)ttq.setAndDefer(ttq,ttq.methods[i]);` +
      `ttq.load=function(e){var n='https://analytics.tiktok.com/i18n/pixel/events.js';ttq._i=ttq._i||{};ttq._i[e]=[];ttq._t=ttq._t||{};ttq._t[e]=+new Date;` +
      `var o=d.createElement('script');o.async=!0;o.src=n+'?sdkid='+encodeURIComponent(e)+'&lib='+t;var a=d.getElementsByTagName('script')[0];a.parentNode.insertBefore(o,a)};` +
      `ttq.load(${i});ttq.page();}(window,document,'ttq');`,
  },
  // X (Twitter) pixel base code: uwt.js from static.ads-twitter.com; events to analytics.twitter.com and t.co.
  x: {
    pattern: '^[a-z0-9]{5,6}$',
    form: 'an X pixel id: 5 or 6 lowercase letters or digits, e.g. o1a2b',
    example: 'o1a2b',
    hosts: () => ({
      script: ['https://static.ads-twitter.com'],
      img: ['https://analytics.twitter.com', 'https://t.co'],
      connect: ['https://analytics.twitter.com', 'https://t.co'],
      frame: none,
    }),
    snippet: (i) =>
      `!function(e,t,n,s,u,a){e.twq||(s=e.twq=function(){s.exe?s.exe.apply(s,arguments):s.queue.push(arguments);},s.version='1.1',s.queue=[],` +
      `u=t.createElement(n),u.async=!0,u.src='https://static.ads-twitter.com/uwt.js',a=t.getElementsByTagName(n)[0],a.parentNode.insertBefore(u,a))}(window,document,'script');` +
      `twq('config',${i});`,
  },
  // Pinterest tag base code: core.js from s.pinimg.com, events to ct.pinterest.com.
  pinterest: {
    pattern: '^[0-9]{13}$',
    form: 'a Pinterest tag id: 13 digits, e.g. 2612345678901',
    example: '2612345678901',
    hosts: () => ({
      script: ['https://s.pinimg.com'],
      img: ['https://ct.pinterest.com'],
      connect: ['https://ct.pinterest.com'],
      frame: none,
    }),
    snippet: (i) =>
      `!function(e){if(!window.pintrk){window.pintrk=function(){window.pintrk.queue.push(Array.prototype.slice.call(arguments))};var n=window.pintrk;n.queue=[],n.version='3.0';` +
      `var t=document.createElement('script');t.async=!0,t.src=e;var r=document.getElementsByTagName('script')[0];r.parentNode.insertBefore(t,r)}}('https://s.pinimg.com/ct/core.js');` +
      `pintrk('load',${i});pintrk('page');`,
  },
  // An image pixel of the customer's choice: one GET of the URL as an image.
  custom: {
    pattern: '^[Hh][Tt][Tt][Pp][Ss]://',
    form: 'an https URL of an image pixel, e.g. https://track.example.com/p.gif?c=1',
    example: 'https://track.example.com/p.gif',
    hosts: (url) => ({ script: none, img: [new URL(url).origin], connect: none, frame: none }),
    snippet: (i) => `(new Image()).src=${i};`,
  },
};

/** The message of a 422 for a bad id of this provider. */
export function pixelIdProblem(provider: PixelProvider): string {
  return `Must be ${PROVIDERS[provider].form}.`;
}

/**
 * The schema of a pixel list: {provider, id} items, each id checked against its provider's pattern
 * with a message that names the expected form (if/then per provider).
 */
export const TrackingPixels: JsonSchema = {
  type: ['array', 'null'],
  maxItems: MAX_PIXELS,
  uniqueItems: true,
  description:
    `Up to ${MAX_PIXELS} tracking pixels {provider, id}, loaded by the pixel page (with the visitor's consent unless ` +
    'the organization sets pixel_consent not_required). Id forms: ' +
    PIXEL_PROVIDERS.map((p) => `${p}: ${PROVIDERS[p].form}`).join('; ') +
    '. null: none (a code then uses its brand’s default list).',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['provider', 'id'],
    properties: {
      provider: { type: 'string', enum: [...PIXEL_PROVIDERS] },
      id: { type: 'string', minLength: 1, maxLength: 2048 },
    },
    allOf: PIXEL_PROVIDERS.map((p) => ({
      if: { properties: { provider: { const: p } }, required: ['provider'] },
      then: { properties: { id: patterned(PROVIDERS[p].pattern, pixelIdProblem(p)) } },
    })),
  },
};

/** A pixel list in a response (a code's or a brand's); `description` says whose. */
export function trackingPixelsOut(description: string): JsonSchema {
  return {
    type: ['array', 'null'],
    items: {
      type: 'object',
      required: ['provider', 'id'],
      properties: { provider: { type: 'string' }, id: { type: 'string' } },
    },
    description,
  };
}

/**
 * A pixel list the schema accepted, with custom pixels' URLs normalised (server/schemas/http-url.ts),
 * or the problems by field (`<field>.<index>.id`).
 */
export function normalisePixels(
  pixels: readonly TrackingPixel[],
  field: string,
): { pixels: TrackingPixel[]; problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  const out = pixels.map((p, i) => {
    if (p.provider !== 'custom') return p;
    const check = normaliseHttpUrl(p.id);
    if (check.ok && check.url.startsWith('https://')) return { ...p, id: check.url };
    problems[`${field}.${i}.id`] = check.ok ? pixelIdProblem('custom') : check.problem;
    return p;
  });
  return { pixels: out, problems };
}

/** The union of the CSP sources a list of pixels needs, each list sorted and without repeats. */
function pixelHosts(pixels: readonly TrackingPixel[]): PixelHosts {
  const out = {
    script: new Set<string>(),
    img: new Set<string>(),
    connect: new Set<string>(),
    frame: new Set<string>(),
  };
  for (const p of pixels) {
    const h = PROVIDERS[p.provider].hosts(p.id);
    for (const k of ['script', 'img', 'connect', 'frame'] as const) for (const s of h[k]) out[k].add(s);
  }
  const list = (s: Set<string>) => [...s].sort();
  return { script: list(out.script), img: list(out.img), connect: list(out.connect), frame: list(out.frame) };
}

/** JSON as a JavaScript literal that cannot end a <script> element. */
function jsLiteral(value: string): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e');
}

/** The providers' snippets for a list of pixels, as one function body. */
function pixelSnippets(pixels: readonly TrackingPixel[]): string {
  return pixels.map((p) => `try{${PROVIDERS[p.provider].snippet(jsLiteral(p.id))}}catch(e){}`).join('\n');
}

/** A provider's example id (docs and tests). */
export function examplePixelId(provider: PixelProvider): string {
  return PROVIDERS[provider].example;
}

/** The pixels a scan of a code loads: its own list when it has one (even empty), else its brand's. */
export function pixelsFor(
  own: readonly TrackingPixel[] | null | undefined,
  brand: readonly TrackingPixel[] | null | undefined,
): TrackingPixel[] {
  return [...(own ?? brand ?? [])];
}

/** What the redirect needs to answer a code's pixel page, built once per cached code. */
export interface PixelPageEntry {
  pixels: TrackingPixel[];
  /** Whether the visitor is asked first (the organization's pixel_consent is required). */
  consentRequired: boolean;
  /** The page's one script (the snippets and the page's own logic) and its CSP. */
  script: string;
  csp: string;
}

/**
 * The page's script: the snippets run only inside load(), which runs at once (mode load) or when
 * the visitor accepts (mode ask). Everything that varies per request (next URL, seconds, mode) is
 * read from data attributes of #px, so the script and its hash are the same for every visit of a code.
 */
function pageScript(pixels: readonly TrackingPixel[]): string {
  return `(function(){
function load(){
${pixelSnippets(pixels)}
}
var d=document.getElementById('px'),mode=d.getAttribute('data-mode'),secs=Number(d.getAttribute('data-seconds'))||0;
var c=document.getElementById('count'),left=secs,done=false;
function go(u){location.replace(u);}
var t=setInterval(function(){left--;if(c&&left>=0)c.textContent=String(left);},1000);
if(mode==='load'){load();setTimeout(function(){go(d.getAttribute('data-next'));},Math.max(secs*1000,${PIXEL_SETTLE_MS}));return;}
var yes=document.getElementById('accept'),no=document.getElementById('decline');
yes.addEventListener('click',function(e){e.preventDefault();if(done)return;done=true;clearInterval(t);yes.setAttribute('aria-disabled','true');load();setTimeout(function(){go(yes.href);},${PIXEL_SETTLE_MS});});
no.addEventListener('click',function(){done=true;});
setTimeout(function(){if(!done){done=true;go(d.getAttribute('data-none'));}},secs*1000);
})();`;
}

/** How long the page waits after loading the pixels before it moves on, so their requests go out. */
const PIXEL_SETTLE_MS = 1500;

/** The pixel page's Content-Security-Policy: its script by hash, and exactly the providers' hosts. */
function pageCsp(scriptHash: string, pixels: readonly TrackingPixel[]): string {
  const h = pixelHosts(pixels);
  const dir = (name: string, sources: string[]) => (sources.length ? `; ${name} ${sources.join(' ')}` : '');
  return (
    `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${scriptHash}'${h.script.length ? ` ${h.script.join(' ')}` : ''}` +
    `${dir('img-src', h.img)}${dir('connect-src', h.connect)}${dir('frame-src', h.frame)}` +
    `; form-action 'none'; base-uri 'none'; frame-ancestors 'none'`
  );
}

/** The pixel page of a code, or null when it loads no pixels (then nothing changes for its scans). */
export function pixelPageEntry(pixels: readonly TrackingPixel[], consentRequired: boolean): PixelPageEntry | null {
  if (!pixels.length) return null;
  const script = pageScript(pixels);
  const hash = createHash('sha256').update(script).digest('base64');
  return { pixels: [...pixels], consentRequired, script, csp: pageCsp(hash, pixels) };
}

const PROVIDER_NAMES: Record<PixelProvider, string> = {
  meta: 'Meta',
  ga4: 'Google Analytics',
  google_ads: 'Google Ads',
  linkedin: 'LinkedIn',
  tiktok: 'TikTok',
  x: 'X',
  pinterest: 'Pinterest',
  custom: '',
};

/** Who receives data, as the banner names them: provider names, and a custom pixel's host. */
export function pixelRecipients(pixels: readonly TrackingPixel[]): string[] {
  const names = pixels.map((p) => (p.provider === 'custom' ? new URL(p.id).host : PROVIDER_NAMES[p.provider]));
  return [...new Set(names)];
}

/** What the scan's visitor answered: the `consent_<outcome>` action recorded with the scan. */
export const CONSENT_OUTCOMES = ['granted', 'denied', 'none', 'not_required'] as const;
export type ConsentOutcome = (typeof CONSENT_OUTCOMES)[number];
/** The answers the pixel page sends back (`?qr_consent=`). */
export type ConsentChoice = Exclude<ConsentOutcome, 'not_required'>;

/** The first-party cookie that remembers an answer, and for how long: 6 months (183 days). */
export const CONSENT_COOKIE = 'qr_consent';
const CONSENT_MAX_AGE_SECONDS = 183 * 24 * 60 * 60;

/** The answer a request of the pixel page carries (`?qr_consent=granted|denied|none`), or null. */
export function consentChoice(url: string | undefined): ConsentChoice | null {
  const q = url ? url.indexOf('?') : -1;
  if (q === -1) return null;
  const v = new URLSearchParams(url!.slice(q + 1)).get('qr_consent');
  return v === 'granted' || v === 'denied' || v === 'none' ? v : null;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The scan id a pixel page's answer carries (`&qr_scan=`, conversion tracking), or null. */
export function carriedScanId(url: string | undefined): string | null {
  const q = url ? url.indexOf('?') : -1;
  if (q === -1) return null;
  const v = new URLSearchParams(url!.slice(q + 1)).get('qr_scan');
  return v !== null && ULID.test(v) ? v : null;
}

/** A remembered answer from the cookie's value. */
export function rememberedConsent(value: string | null): 'granted' | 'denied' | null {
  return value === 'granted' || value === 'denied' ? value : null;
}

/**
 * The Set-Cookie of an answer: per domain (on a shared fallback host, per organization: Path is the
 * organization's slug), 6 months, HttpOnly (only the server reads it), Lax, Secure over https.
 */
export function consentCookie(choice: 'granted' | 'denied', path: string, secure: boolean): string {
  return `${CONSENT_COOKIE}=${choice}; Max-Age=${CONSENT_MAX_AGE_SECONDS}; Path=${path}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}
