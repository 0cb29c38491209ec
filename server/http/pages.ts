import { createRequire } from 'node:module';
import path from 'node:path';
import { apiBaseUrl } from '../config.js';
import type { AppContext } from '../context.js';
import { loadStaticFile, type StaticFile } from '../http-common/static-files.js';

function page(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>${head}</head>
<body><main>
<h1>${title}</h1>
${body}
</main></body></html>
`;
}

/**
 * The API reference viewer of /docs: Swagger UI (swagger-ui-dist, Apache-2.0) served from the
 * service's own files, never a CDN, drawing /v1/openapi.json. Its start script is ours, so the
 * page's policy allows scripts of the service only.
 */
const VIEWER_START = `window.addEventListener('load', function () {
  window.SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#reference',
    deepLinking: false,
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    docExpansion: 'list',
  });
  // The viewer's server select has no label; screen readers get one.
  new MutationObserver(function () {
    var servers = document.getElementById('servers');
    if (servers && !servers.hasAttribute('aria-label')) servers.setAttribute('aria-label', 'Server');
  }).observe(document.getElementById('reference'), { childList: true, subtree: true });
});
`;
/** Colours of the viewer darkened to a contrast of at least 4.5:1 (WCAG AA). */
const VIEWER_STYLE = `.swagger-ui .info .title small { background: #4b5563; }
.swagger-ui .info .title small.version-stamp { background: #3f6212; }
.swagger-ui .info .url, .swagger-ui .info a { color: #1d4ed8; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1e40af; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #166534; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #9a3412; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #115e59; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b91c1c; }
.swagger-ui .btn.authorize { color: #166534; border-color: #166534; }
.swagger-ui .btn.authorize svg { fill: #166534; }
`;
let viewer: Map<string, StaticFile> | undefined;

/** The viewer's files by name under /docs/assets/, read once. */
export function referenceViewerFiles(): Map<string, StaticFile> {
  if (!viewer) {
    const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    viewer = new Map([
      ['swagger-ui.css', loadStaticFile(path.join(dist, 'swagger-ui.css'))],
      ['swagger-ui-bundle.js', loadStaticFile(path.join(dist, 'swagger-ui-bundle.js'))],
      ['reference.js', loadStaticFile('reference.js', VIEWER_START)],
      ['reference.css', loadStaticFile('reference.css', VIEWER_STYLE)],
    ]);
  }
  return viewer;
}

/** The policy of /docs: the service's own scripts; the viewer sets element styles. */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** GET /docs: where the API is described, how a first call looks, and the reference of every operation. */
export function docsPage(app: AppContext): string {
  const base = apiBaseUrl(app.config, app.apiPort());
  return page(
    'QR code service API',
    `<p>Organization-scoped dynamic QR codes. Every REST path starts with <code>/v1</code>; every call sends
<code>Authorization: Bearer &lt;token&gt;</code>. Tokens are created with <code>qrctl org create</code> or
<code>POST /v1/tokens</code>.</p>
<ul>
<li><a href="/v1/openapi.json">The OpenAPI 3.1 document</a>: every operation, its parameters, answers and headers.</li>
<li><a href="/docs/rate-limits">Rate limits</a>: the one-minute window and the 429 answer.</li>
<li>Tool calls (MCP, JSON-RPC 2.0 over HTTP): <code>POST ${base}/mcp</code>, the same operations as 25 tools.</li>
</ul>
<p>A first call:</p>
<pre>curl -H "Authorization: Bearer &lt;token&gt;" ${base}/v1/status</pre>
<p>Errors are JSON <code>{message, code}</code>; 422 adds <code>errors</code> per field. Every response carries
<code>X-Request-Id</code>.</p>
<h2>Reference</h2>
<div id="reference"><p>The reference of every operation needs JavaScript; without it, read
<a href="/v1/openapi.json">the OpenAPI document</a>.</p></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/reference.js"></script>`,
    '<link rel="stylesheet" href="/docs/assets/swagger-ui.css"><link rel="stylesheet" href="/docs/assets/reference.css">',
  );
}

/** The help page linked from 429 responses (Link: rel=help, type text/html). */
export function rateLimitPage(app: AppContext): string {
  const c = app.config;
  return page(
    'API rate limits',
    `<p>Each organization has one fixed one-minute window, shared by the REST API and the tool-call (MCP)
interface and by every server. Its size is the greater of the platform ceiling
(${c.platformRateLimitPerMin} requests per minute) and the plan's limit; GET /v1/status reports it
in <code>api.rate_limit_per_min</code>.</p>
<p>Every /v1 response of an admitted call carries <code>X-RateLimit-Limit</code>, <code>X-RateLimit-Remaining</code> and
<code>X-RateLimit-Reset</code> (Unix time, seconds, when the window resets). Past the limit the answer is
429 with <code>Retry-After</code> (seconds) and a JSON body {message, code: "rate_limited", retry_after, documentation}.</p>
<p>The raw scan export has an additional window of ${c.rawExportRateLimitPerMin} requests per minute.</p>`,
  );
}
