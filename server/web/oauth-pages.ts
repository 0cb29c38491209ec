// The server-rendered pages of the authorization endpoint: sign-in (the dashboard's accounts),
// consent and the error page for a request that cannot be sent back to the client. They are
// served with a CSP that forbids framing and any script (frame-ancestors 'none', X-Frame-Options
// DENY), so no other site can overlay or click them.
import type Koa from 'koa';
import { escapeHtml } from '../http-common/html.js';
import type { OAuthClient } from '../oauth/clients.js';

const STYLE = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
legend{font-weight:600}label{display:block;margin:.35rem 0}.warn{background:#fff4e5;border:1px solid #f0b357;
border-radius:6px;padding:.6rem .8rem}.muted{color:#555;font-size:.9rem}button{font-size:1rem;padding:.5rem 1.2rem;
margin-right:.6rem}input[type=email],input[type=password]{width:100%;padding:.4rem;font-size:1rem}
.error{color:#a00}code{word-break:break-all}`;

function sendPage(ctx: Koa.Context, status: number, title: string, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  // No form-action: Chromium applies it to the redirect to the client after the form, which is the point.
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>
<h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>
`;
}

/** The authorization request's parameters, carried through the forms unchanged. */
function hidden(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
}

function clientLine(client: OAuthClient, redirectUri: string): string {
  const name = client.name ?? '(no name given)';
  return `<p class="warn"><strong>${escapeHtml(name)}</strong> (unverified) wants to use the QR code service on your behalf.
It will be sent back to <strong>${escapeHtml(new URL(redirectUri).host || redirectUri)}</strong> (unverified).
The name and address are what the application says about itself: allow it only if you started this from an assistant you trust.</p>
<p class="muted">Client id: <code>${escapeHtml(client.clientId)}</code></p>`;
}

export function signInPage(
  ctx: Koa.Context,
  input: { client: OAuthClient; redirectUri: string; params: Record<string, string>; csrf: string; error?: string },
): void {
  sendPage(
    ctx,
    input.error ? 401 : 200,
    'Sign in to connect an application',
    `${clientLine(input.client, input.redirectUri)}
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="/oauth/authorize">
${hidden(input.params)}
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrf)}">
<label>Email <input type="email" name="email" autocomplete="username" required></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<p><button type="submit" name="action" value="sign_in">Sign in</button></p>
</form>
<p class="muted">This is your QR code service dashboard account.</p>`,
  );
}

export interface OrgChoice {
  ulid: string;
  name: string;
  role: string;
  /** The scopes this role may grant; empty when the role has no mcp.access. */
  grantable: readonly string[];
}

const ABILITY_TEXT: Record<string, string> = {
  'mcp.access': 'Use the tool interface (always part of a connection)',
  'codes.view': 'See QR codes and their images',
  'codes.create': 'Create QR codes',
  'codes.update': 'Change QR codes (destination, status, …)',
  'codes.delete': 'Delete QR codes',
  'brands.view': 'See brands',
  'brands.manage': 'Create and change brands',
  'domains.view': 'See domains',
  'domains.manage': 'Add and change domains',
  'analytics.view': 'See scan analytics',
  'analytics.export': 'Export raw scans',
  'styles.manage': 'Create QR styles',
  'wallet.view': 'See the wallet balance',
};

export function consentPage(
  ctx: Koa.Context,
  input: {
    client: OAuthClient;
    redirectUri: string;
    params: Record<string, string>;
    csrf: string;
    email: string;
    orgs: OrgChoice[];
    requested: readonly string[];
  },
): void {
  const usable = input.orgs.filter((o) => o.grantable.length);
  const orgOptions = input.orgs
    .map(
      (o, i) =>
        `<label><input type="radio" name="org_ulid" value="${escapeHtml(o.ulid)}"${o.grantable.length ? '' : ' disabled'}${
          o.ulid === usable[0]?.ulid || (i === 0 && !usable.length) ? ' checked' : ''
        } required> ${escapeHtml(o.name)} <span class="muted">(${escapeHtml(o.role)}${
          o.grantable.length ? '' : ': this role cannot use the tool interface'
        })</span></label>`,
    )
    .join('\n');
  const abilityBoxes = input.requested
    .map(
      (a) =>
        `<label><input type="checkbox" name="abilities" value="${escapeHtml(a)}" checked${a === 'mcp.access' ? ' disabled' : ''}> ${escapeHtml(
          ABILITY_TEXT[a] ?? a,
        )} <code class="muted">${escapeHtml(a)}</code></label>`,
    )
    .join('\n');
  sendPage(
    ctx,
    200,
    'Connect an application',
    `${clientLine(input.client, input.redirectUri)}
<p class="muted">Signed in as ${escapeHtml(input.email)}.</p>
<form method="post" action="/oauth/authorize">
${hidden(input.params)}
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrf)}">
<fieldset><legend>Organization</legend>
${orgOptions || '<p>You are not a member of any organization.</p>'}
</fieldset>
<fieldset><legend>What it may do</legend>
${abilityBoxes}
<p class="muted">Abilities your role in the chosen organization does not hold are never granted.</p>
</fieldset>
<p><button type="submit" name="action" value="allow"${usable.length ? '' : ' disabled'}>Allow</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button></p>
</form>
<p class="muted">You can disconnect it at any time under API tokens in the dashboard (“connected apps”).</p>`,
  );
}

/** A request that must not be sent back to the client (unknown client, foreign redirect URI). */
export function errorPage(ctx: Koa.Context, error: string, description: string): void {
  sendPage(
    ctx,
    400,
    'This connection request cannot be used',
    `<p class="error" role="alert"><code>${escapeHtml(error)}</code>: ${escapeHtml(description)}</p>
<p>Nothing was shared. Go back to the application and try again, or ask its maker.</p>`,
  );
}
