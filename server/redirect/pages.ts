// The visitor-facing pages: small, accessible HTML with no third-party assets. Every piece of
// user-provided text goes through escapeHtml; URLs placed in attributes are http(s) only.
import { createHash } from 'node:crypto';
import { escapeHtml } from '../http-common/html.js';
import { CONSENT_WORDS } from '../landing/i18n.js';
import type { PageLanguage } from '../qr-codes/landing-config.js';

const STYLE = `body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1a1a1a;background:#f6f6f4}
main{max-width:32rem;margin:12vh auto;padding:2rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin:0 0 .75rem}a{color:#0b57d0}
label{display:block;font-weight:600;margin:.5rem 0 .25rem}
input{font:inherit;padding:.5rem;width:100%;box-sizing:border-box;border:1px solid #767676;border-radius:.25rem}
button{font:inherit;margin-top:1rem;padding:.5rem 1.25rem;border:0;border-radius:.25rem;background:#0b57d0;color:#fff;cursor:pointer}
button:focus,input:focus,a:focus{outline:3px solid #f9ab00;outline-offset:2px}
.error{color:#b3261e;font-weight:600}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}main{background:#1e1e1e}a{color:#8ab4f8}}`;

function layout(title: string, body: string, head = '', lang = 'en'): string {
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
${head}</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/**
 * The pages that carry no request data are built once, as bytes: a flood of unknown slugs is
 * answered with the same buffer every time rather than a new string per request.
 */
export const NOT_FOUND_PAGE: Buffer = Buffer.from(
  layout(
    'Not found',
    `<h1>This code is not available</h1>
<p>The QR code or link you followed does not exist or is no longer active.</p>`,
  ),
);

export const TOO_LARGE_PAGE: Buffer = Buffer.from(
  layout(
    'Too large',
    `<h1>The form is too large</h1>
<p>The form sent was larger than this page accepts. Please go back and try again.</p>`,
  ),
);

export type GoneReason = 'not_started' | 'expired' | 'outside_schedule' | 'cap_reached' | 'no_destination';

const GONE_TEXT: Record<GoneReason, string> = {
  not_started: 'This code is not active yet. Please try again later.',
  expired: 'This code has expired.',
  outside_schedule: 'This code is not active at this time. Please try again later.',
  cap_reached: 'This code has reached its limit of visits.',
  no_destination: 'This code has no destination.',
};

export const GONE_PAGES = Object.fromEntries(
  Object.entries(GONE_TEXT).map(([reason, text]) => [
    reason,
    Buffer.from(
      layout(
        'No longer available',
        `<h1>This code is not available</h1>
<p>${escapeHtml(text)}</p>`,
      ),
    ),
  ]),
) as Record<GoneReason, Buffer>;

export function passwordPage(opts: { action: string; error?: string }): string {
  const error = opts.error ? `<p class="error" id="pw-error" role="alert">${escapeHtml(opts.error)}</p>\n` : '';
  return layout(
    'Password required',
    `<h1>This code is protected</h1>
<p>Enter the password to continue.</p>
${error}<form method="post" action="${escapeHtml(opts.action)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus${opts.error ? ' aria-invalid="true" aria-describedby="pw-error"' : ''}>
<button type="submit">Continue</button>
</form>`,
  );
}

export function throttledPage(retryAfterSeconds: number): string {
  return layout(
    'Too many attempts',
    `<h1>Too many attempts</h1>
<p>Too many wrong passwords were entered. Please wait ${retryAfterSeconds} seconds and try again.</p>`,
  );
}

/**
 * The prelander's countdown: the same script for every page (the seconds are the text of #count,
 * the URL the href of #go), so the page's CSP allows it by its hash, never by 'unsafe-inline'.
 */
const PRELANDER_SCRIPT = `(function(){var c=document.getElementById('count'),go=document.getElementById('go'),n=Number(c.textContent);
if(n<=0){location.replace(go.href);return;}
var t=setInterval(function(){n--;if(n<=0){clearInterval(t);location.replace(go.href);}else{c.textContent=n;}},1000);})();`;

/** The prelander page's Content-Security-Policy: its one script by hash. */
export const PRELANDER_CSP = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${createHash('sha256').update(PRELANDER_SCRIPT).digest('base64')}'; base-uri 'none'; frame-ancestors 'none'`;

/**
 * The interstitial: the message, a countdown, a link to go on at once; meta refresh does the rest.
 * With 0 seconds it moves on at once (the page of a url code with custom_js, which runs first).
 */
export function prelanderPage(opts: { url: string; seconds: number; message: string | null }): string {
  const seconds = Math.max(0, Math.min(60, Math.trunc(opts.seconds)));
  const url = escapeHtml(opts.url);
  const message = opts.message ? `<p>${escapeHtml(opts.message)}</p>\n` : '';
  // The URL reaches the script only through the escaped attribute, never as script text.
  return layout(
    'Redirecting',
    `<h1>You are being redirected</h1>
${message}<p role="status" aria-live="polite">Continuing in <span id="count">${seconds}</span> seconds.</p>
<p><a id="go" href="${url}">Continue now</a></p>
<script>${PRELANDER_SCRIPT}</script>`,
    `<meta http-equiv="refresh" content="${seconds};url=${url}">\n`,
  );
}

const CONSENT_STYLE = `<style>.consent{border-top:1px solid #ccc;margin-top:1.25rem;padding-top:1rem}
.consent a.button{display:inline-block;margin:.75rem .75rem 0 0;padding:.5rem 1.25rem;border-radius:.25rem;text-decoration:none;font-weight:600}
#accept{background:#0b57d0;color:#fff}#decline{border:2px solid #0b57d0}</style>
`;

/**
 * The pixel page: the prelander's message (when the code has one), then either the consent banner
 * (mode ask: Accept and Decline are links to `?qr_consent=granted|denied` and the scan id; nothing moves on its own
 * without script but the refresh to `?qr_consent=none`) or nothing more (mode load: the pixels load
 * at once and the page moves on to `next`). The one script is the code's (qr-codes/pixels.ts), allowed
 * by its hash; every value here reaches it as an escaped attribute, never as script text.
 */
export function pixelPage(opts: {
  lang: PageLanguage;
  script: string;
  recipients: string[];
  mode: 'ask' | 'load';
  /** Added to each answer's query (the scan's id when conversions are tracked). */
  answerSuffix: string;
  next: string;
  seconds: number;
  message: string | null;
}): string {
  const w = CONSENT_WORDS[opts.lang];
  const seconds = Math.max(0, Math.min(60, Math.trunc(opts.seconds)));
  const message = opts.message ? `<p>${escapeHtml(opts.message)}</p>\n` : '';
  const count = `<p role="status" aria-live="polite">${escapeHtml(w.continuing).replace('{n}', `<span id="count">${seconds}</span>`)}</p>`;
  const suffix = escapeHtml(opts.answerSuffix);
  const none = `?qr_consent=none${suffix}`;
  const data = `id="px" data-mode="${opts.mode}" data-seconds="${seconds}" data-next="${escapeHtml(opts.next)}" data-none="${none}"`;
  const banner =
    opts.mode === 'ask'
      ? `<section class="consent" aria-labelledby="consent-title">
<h2 id="consent-title">${escapeHtml(w.title)}</h2>
<p>${escapeHtml(w.text).replace('{who}', escapeHtml(opts.recipients.join(', ')))}</p>
<a class="button" id="accept" href="?qr_consent=granted${suffix}">${escapeHtml(w.accept)}</a><a class="button" id="decline" href="?qr_consent=denied${suffix}">${escapeHtml(w.decline)}</a>
</section>
${count}`
      : `${count}\n<p><a href="${escapeHtml(opts.next)}">${escapeHtml(w.redirecting)}</a></p>`;
  const refresh = opts.mode === 'ask' ? none : escapeHtml(opts.next);
  return layout(
    w.redirecting,
    `<div ${data}>
<h1>${escapeHtml(w.redirecting)}</h1>
${message}${banner}
</div>
<script>${opts.script}</script>`,
    `${CONSENT_STYLE}<noscript><meta http-equiv="refresh" content="${seconds};url=${refresh}"></noscript>\n`,
    opts.lang,
  );
}
