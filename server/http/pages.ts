import { apiBaseUrl } from '../config.js';
import type { AppContext } from '../context.js';

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title></head>
<body><main>
<h1>${title}</h1>
${body}
</main></body></html>
`;
}

/** GET /docs: where the API is described and how a first call looks. */
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
<code>X-Request-Id</code>.</p>`,
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
