import type { AppContext } from '../context.js';

/** The help page linked from 429 responses (Link: rel=help, type text/html). */
export function rateLimitPage(app: AppContext): string {
  const c = app.config;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API rate limits</title></head>
<body><main>
<h1>API rate limits</h1>
<p>Each organization has one fixed one-minute window, shared by the REST API and the tool-call (MCP)
interface and by every server. Its size is the greater of the platform ceiling
(${c.platformRateLimitPerMin} requests per minute) and the plan's limit; GET /v1/status reports it
in <code>api.rate_limit_per_min</code>.</p>
<p>Every /v1 response carries <code>X-RateLimit-Limit</code>, <code>X-RateLimit-Remaining</code> and
<code>X-RateLimit-Reset</code> (Unix time, seconds, when the window resets). Past the limit the answer is
429 with <code>Retry-After</code> (seconds) and a JSON body {message, retry_after, documentation}.</p>
<p>The raw scan export has an additional window of ${c.rawExportRateLimitPerMin} requests per minute.</p>
</main></body></html>
`;
}
