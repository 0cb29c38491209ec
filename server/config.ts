// Every configuration key the service reads, declared once (CONFIG_KEYS: its variable, default,
// parser and line of help); the typed Config and docs/configuration.md are derived from it.
// This is the only file that reads process.env.
import net from 'node:net';
import path from 'node:path';
import { parseDecimalInteger } from './schemas/decimal.js';
import { LOG_FORMATS } from './logger.js';

/**
 * One configuration key, declared once: its environment variable, its default (as the text an
 * operator would write), how its text becomes the value (throwing ConfigError naming the variable),
 * and its line of help. The typed Config and docs/configuration.md are derived from these.
 */
interface KeyDef<T> {
  env: string;
  default: string;
  parse: (value: string, env: string) => T;
  help: string;
}

/**
 * The most rows BULK_IMPORT_MAX_ROWS may allow: the bulk import schema's maxItems, fixed so that the
 * OpenAPI document and the MCP tool state one bound whatever an installation configures.
 */
export const BULK_IMPORT_ROWS_CEILING = 100_000;
/** The most codes QR_EXPORT_MAX_CODES may allow: the export schema's maxItems. */
export const EXPORT_CODES_CEILING = 100_000;

export const CONFIG_KEYS = {
  nodeEnv: { env: 'NODE_ENV', default: 'development', parse: text, help: 'development, test or production.' },
  dataDir: {
    env: 'DATA_DIR',
    default: './var',
    parse: (v) => path.resolve(v),
    help: 'Where embedded Postgres, embedded ClickHouse (chDB) and scan spill files live.',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    default: '',
    parse: optional,
    help: 'Postgres connection string. Unset: an embedded Postgres is started under DATA_DIR/postgres.',
  },
  embeddedPgPort: {
    env: 'EMBEDDED_PG_PORT',
    default: '0',
    parse: integer(),
    help: 'Port of the embedded Postgres (loopback only). 0 picks a free port, recorded in DATA_DIR/postgres.json.',
  },
  dbPoolMax: {
    env: 'DB_POOL_MAX',
    default: '20',
    parse: integer(1),
    help: 'Most Postgres connections one process keeps open for queries (plus one LISTEN connection and the worker’s own pool).',
  },
  clickhouseUrl: {
    env: 'CLICKHOUSE_URL',
    default: '',
    parse: optional,
    help: 'ClickHouse HTTP URL (http://user:pass@host:8123). Unset: embedded chDB under DATA_DIR/clickhouse.',
  },
  clickhouseDatabase: {
    env: 'CLICKHOUSE_DATABASE',
    default: 'qr',
    parse: text,
    help: 'ClickHouse database for scans.',
  },
  clickhouseCluster: {
    env: 'CLICKHOUSE_CLUSTER',
    default: '',
    parse: optional,
    help: 'Cluster name: migrations create ReplicatedMergeTree + Distributed tables ON CLUSTER.',
  },
  apiHost: { env: 'API_HOST', default: '127.0.0.1', parse: text, help: 'Interface the API listener binds to.' },
  apiPort: {
    env: 'API_PORT',
    default: '3000',
    parse: integer(),
    help: 'Port of the API listener (/v1, /mcp, /healthz, /readyz, /metrics).',
  },
  redirectHost: {
    env: 'REDIRECT_HOST',
    default: '127.0.0.1',
    parse: text,
    help: 'Interface the public redirect binds to.',
  },
  redirectPort: {
    env: 'REDIRECT_PORT',
    default: '3001',
    parse: integer(),
    help: 'Port of the public redirect listener.',
  },
  redirectTlsPort: {
    env: 'REDIRECT_TLS_PORT',
    default: '',
    parse: (v, env) => (v === '' ? null : int(env, v)),
    help: 'Port of the HTTPS redirect listener (custom domains’ certificates chosen by SNI). Empty: off.',
  },
  redirectTlsCertFile: {
    env: 'REDIRECT_TLS_CERT_FILE',
    default: '',
    parse: text,
    help: 'PEM certificate chain served to clients without SNI or with an unknown name (the shared fallback host). Required with REDIRECT_TLS_PORT.',
  },
  redirectTlsKeyFile: {
    env: 'REDIRECT_TLS_KEY_FILE',
    default: '',
    parse: text,
    help: 'PEM private key of REDIRECT_TLS_CERT_FILE.',
  },
  enableApi: { env: 'ENABLE_API', default: 'true', parse: boolean, help: 'Serve the API listener in this process.' },
  enableRedirect: {
    env: 'ENABLE_REDIRECT',
    default: 'true',
    parse: boolean,
    help: 'Serve the public redirect in this process.',
  },
  redirectProcesses: {
    env: 'REDIRECT_PROCESSES',
    default: '1',
    parse: integer(1, 256),
    help: 'Processes serving the public redirect (node:cluster, sharing its ports); above 1 the main process keeps the API, the worker and the stores and forks that many redirect processes, restarting any that dies. One per core uses the machine (docs/redirect.md).',
  },
  enableWorker: {
    env: 'ENABLE_WORKER',
    default: 'true',
    parse: boolean,
    help: 'Run graphile-worker inside this process.',
  },
  workerConcurrency: {
    env: 'WORKER_CONCURRENCY',
    default: '4',
    parse: integer(1),
    help: 'Jobs run at once by graphile-worker.',
  },
  publicApiUrl: {
    env: 'PUBLIC_API_URL',
    default: '',
    parse: optional,
    help: 'Public base URL of the API, used in links (rate-limit help, OpenAPI servers). Default: http://API_HOST:API_PORT.',
  },
  mcpAllowedOrigins: {
    env: 'MCP_ALLOWED_ORIGINS',
    default: '',
    parse: list,
    help:
      'Comma-separated browser origins (https://app.example.com) allowed to call /mcp. Empty: a request that ' +
      'carries an Origin header is refused (403); server-to-server clients send none.',
  },
  metricsToken: {
    env: 'METRICS_TOKEN',
    default: '',
    parse: optional,
    help: 'Bearer token /metrics requires. Empty: /metrics answers only requests from a loopback address (403 otherwise).',
  },
  fallbackOrigins: {
    env: 'FALLBACK_ORIGINS',
    default: 'http://localhost:3001',
    parse: (v) => list(v).map((o) => o.replace(/\/+$/, '')),
    help: 'Comma-separated shared fallback origins; they appear in every organization’s domain list.',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    default: 'info',
    parse: text,
    help: 'pino log level: fatal, error, warn, info, debug, trace, silent.',
  },
  logFormat: {
    env: 'LOG_FORMAT',
    default: 'auto',
    parse: (v, env) => oneOf(env, v, LOG_FORMATS),
    help:
      'Log lines: json (one JSON object a line), pretty (readable lines, pino-pretty), or auto: pretty when ' +
      'standard output is a terminal, json otherwise (a pipe, a file, a log collector).',
  },
  bodyLimitBytes: {
    env: 'BODY_LIMIT_BYTES',
    default: String(5 * 1024 * 1024),
    parse: integer(1024),
    help: 'Largest accepted request body; larger bodies get 413 payload_too_large.',
  },
  importAllowPrivateSources: {
    env: 'IMPORT_ALLOW_PRIVATE_SOURCES',
    default: 'false',
    parse: boolean,
    help: 'Let imports fetch from a source on a loopback or private address (a self-hosted Shlink, Kutt or YOURLS on the same network).',
  },
  importMaxRetryAfterSeconds: {
    env: 'IMPORT_MAX_RETRY_AFTER_SECONDS',
    default: '120',
    parse: integer(0),
    help: 'Longest Retry-After of a 429 an import waits for; a longer one stops the import, which can be resumed.',
  },
  platformRateLimitPerMin: {
    env: 'PLATFORM_RATE_LIMIT_PER_MIN',
    default: '60',
    parse: integer(1),
    help: 'Platform ceiling of the per-organization minute window; the effective limit is max(this, plan limit).',
  },
  apiLeaseCalls: {
    env: 'API_LEASE_CALLS',
    default: '256',
    parse: integer(1),
    help: 'Most API calls one process leases at once from an organization’s minute window and prepaid calls, then admits without a round trip to Postgres; the unspent ones are given back in the background. Each process may hold this many beyond what it has answered, so another process can be refused by the window or the wallet while they are held (docs/api.md, Leases). 1 turns leases off: every call is admitted in its own round trip.',
  },
  apiLeaseSeconds: {
    env: 'API_LEASE_SECONDS',
    default: '10',
    parse: integer(1),
    help: 'Lifetime of an API call lease (never past the end of its minute window); a crashed process’s unspent calls come back this long (plus 5 s) after it took them.',
  },
  apiLeaseDir: {
    env: 'API_LEASE_DIR',
    default: '',
    parse: optional,
    help: 'Where each process journals the calls it admits from a lease (one byte per call, so a crashed process’s spent calls are known); every process of a host must share it. Unset: DATA_DIR/api-leases.',
  },
  rawExportRateLimitPerMin: {
    env: 'RAW_EXPORT_RATE_LIMIT_PER_MIN',
    default: '6',
    parse: integer(1),
    help: 'Extra per-organization minute window of the raw-export endpoint.',
  },
  liveStreamBuffer: {
    env: 'LIVE_STREAM_BUFFER',
    default: '1000',
    parse: integer(10, 1_000_000),
    help: 'Events a live scan stream (GET /v1/scans/stream) lets its client be behind: newly stored scans are delivered while it is less behind, else counted in a gap event.',
  },
  scanFlushMs: {
    env: 'SCAN_FLUSH_MS',
    default: '3000',
    parse: integer(50, 60_000),
    help: 'How often the redirect sends its scans, landing-page actions and orphan scans to ClickHouse (a batch per table and process; sooner when SCAN_BATCH_MAX_ROWS rows are waiting). Longer batches cost ClickHouse less per scan (the rollups write rows per code and value in the batch, not per scan) but reach analytics and redirects_count later.',
  },
  scanBatchMaxRows: {
    env: 'SCAN_BATCH_MAX_ROWS',
    default: '50000',
    parse: integer(100, 1_000_000),
    help: 'The most rows of one scan batch: a batch leaves when it has this many rows, before SCAN_FLUSH_MS is up.',
  },
  liveStreamFlushMs: {
    env: 'LIVE_STREAM_FLUSH_MS',
    default: '500',
    parse: integer(10, 60_000),
    help: 'How often the redirect sends its scans and landing-page actions to ClickHouse while any live scan stream (GET /v1/scans/stream) is open, of any organization on any process (otherwise every SCAN_FLUSH_MS): shorter brings events sooner, at the cost of more, smaller inserts.',
  },
  liveStreamHeartbeatMs: {
    env: 'LIVE_STREAM_HEARTBEAT_MS',
    default: '15000',
    parse: integer(100, 60_000),
    help: 'Interval of the live scan stream heartbeat comment, and of the refresh of its open-stream count; also of the keep-alive comment of MCP subscriptions/listen streams.',
  },
  rateLimitHelpUrl: {
    env: 'RATE_LIMIT_HELP_URL',
    default: '',
    parse: text,
    help: 'Rate-limit help page linked from 429 responses. Default: PUBLIC_API_URL/docs/rate-limits.',
  },
  dnsResolvers: {
    env: 'DNS_RESOLVERS',
    default: '',
    parse: list,
    help: 'Comma-separated resolvers (ip or ip:port) for domain ownership checks. Empty: the system resolvers.',
  },
  acmeDirectoryUrl: {
    env: 'ACME_DIRECTORY_URL',
    default: 'https://acme-v02.api.letsencrypt.org/directory',
    parse: text,
    help: 'ACME directory used to issue certificates for custom domains.',
  },
  acmeCaFile: {
    env: 'ACME_CA_FILE',
    default: '',
    parse: text,
    help: 'PEM file of extra CAs trusted for the ACME directory’s HTTPS (a private ACME server). Empty: the system roots.',
  },
  acmeContactEmail: {
    env: 'ACME_CONTACT_EMAIL',
    default: '',
    parse: text,
    help: 'Contact address registered with the ACME account (expiry notices). Empty: none.',
  },
  trustProxy: {
    env: 'TRUST_PROXY',
    default: '',
    parse: list,
    help: 'Comma-separated proxy addresses whose X-Forwarded-For is believed on the redirect listener.',
  },
  secretKey: {
    env: 'SECRET_KEY',
    default: '',
    parse: text,
    help: 'Key for signed cookies and visitor hashing. Unset: generated once and kept in DATA_DIR/secret.key.',
  },
  bulkImportMaxRows: {
    env: 'BULK_IMPORT_MAX_ROWS',
    default: '10000',
    parse: integer(1, BULK_IMPORT_ROWS_CEILING),
    help: `Most rows one bulk import may stage (at most ${BULK_IMPORT_ROWS_CEILING}, the schema's maxItems).`,
  },
  exportMaxCodes: {
    env: 'QR_EXPORT_MAX_CODES',
    default: '10000',
    parse: integer(1, EXPORT_CODES_CEILING),
    help: `Most codes one print run (POST /v1/qr-codes/exports) may hold (at most ${EXPORT_CODES_CEILING}; PNGs above 1024 px: fewer, by pixel count); a larger selection is 422.`,
  },
  exportTtlHours: {
    env: 'QR_EXPORT_TTL_HOURS',
    default: '72',
    parse: integer(1),
    help: 'Hours a finished print run’s ZIP is kept (in Postgres) before it is removed and the export expires.',
  },
  renderThreads: {
    env: 'RENDER_THREADS',
    default: '2',
    parse: integer(1, 64),
    help: 'Worker threads per process that draw QR images (API, print runs, style previews and checks, MCP), off the event loop that answers redirects.',
  },
  renderQueue: {
    env: 'RENDER_QUEUE',
    default: '32',
    parse: integer(),
    help: 'Renders that may wait for a free render thread; beyond that an image request is answered 503 with Retry-After (print runs wait their turn instead).',
  },
  renderTimeoutMs: {
    env: 'RENDER_TIMEOUT_MS',
    default: '5000',
    parse: integer(100),
    help: 'Time budget of one render: a render still running after it is abandoned (its thread replaced) and answered 503.',
  },
  scannabilityTimeoutMs: {
    env: 'SCANNABILITY_TIMEOUT_MS',
    default: '30000',
    parse: integer(100),
    help: 'Time budget of one scannability check in a render thread (the full verdict reads the symbol and its phone-like captures with three decoders, a few hundred ms on a quiet machine): past it the check is abandoned and answered 503.',
  },
  renderCacheMb: {
    env: 'RENDER_CACHE_MB',
    default: '64',
    parse: integer(),
    help: 'MiB of rendered images kept per process, keyed by organization and ETag, so an identical request is not drawn again. 0: no cache.',
  },
  logoDrawBudgetMs: {
    env: 'LOGO_DRAW_BUDGET_MS',
    default: '100',
    parse: integer(1),
    help: 'Most milliseconds a style’s logo may take to draw at 512 px, measured when the style (or its brand kit) is saved; a costlier logo is refused with 422.',
  },
  passwordHashConcurrency: {
    env: 'PASSWORD_HASH_CONCURRENCY',
    default: '2',
    parse: integer(1),
    help: 'Code passwords hashed (scrypt) at once per process, bulk imports included; the others wait their turn.',
  },
  passwordVerifyConcurrency: {
    env: 'PASSWORD_VERIFY_CONCURRENCY',
    default: '2',
    parse: integer(1),
    help: 'Password-form answers checked (scrypt) at once per process; 100 more may wait, beyond that the form answers 429.',
  },
  domainClaimTtlHours: {
    env: 'DOMAIN_CLAIM_TTL_HOURS',
    default: '168',
    parse: integer(1),
    help: 'Hours an unverified custom-domain claim stays open before it expires (status expired).',
  },
  idempotencyWaitMs: {
    env: 'IDEMPOTENCY_WAIT_MS',
    default: '5000',
    parse: integer(),
    help: 'How long a retry with the Idempotency-Key of a call still running waits for it before answering 409 idempotency_key_in_progress.',
  },
  domainTxtGraceHours: {
    env: 'DOMAIN_TXT_GRACE_HOURS',
    default: '72',
    parse: integer(1),
    help: 'Hours an active custom domain’s TXT record may be missing (daily re-check) before it becomes unverified.',
  },
  webSessionIdleMinutes: {
    env: 'WEB_SESSION_IDLE_MINUTES',
    default: '60',
    parse: integer(1),
    help: 'Dashboard sessions end after this many minutes without a request.',
  },
  webSessionMaxHours: {
    env: 'WEB_SESSION_MAX_HOURS',
    default: '12',
    parse: integer(1),
    help: 'Dashboard sessions end this many hours after sign-in, however active.',
  },
  webRateLimitPerMin: {
    env: 'WEB_RATE_LIMIT_PER_MIN',
    default: '300',
    parse: integer(1),
    help: 'Dashboard calls one session may make per minute (not counted in the API window, not metered).',
  },
  webSignInAccountLimit: {
    env: 'WEB_SIGN_IN_ACCOUNT_LIMIT',
    default: '10',
    parse: integer(1),
    help: 'Sign-in attempts per account (email) per window, across every process; more are 429.',
  },
  webSignInAddressLimit: {
    env: 'WEB_SIGN_IN_ADDRESS_LIMIT',
    default: '50',
    parse: integer(1),
    help: 'Sign-in attempts per client address per window, across every process; more are 429.',
  },
  webSignInWindowMinutes: {
    env: 'WEB_SIGN_IN_WINDOW_MINUTES',
    default: '15',
    parse: integer(1),
    help: 'Length of the fixed sign-in throttle window, in minutes.',
  },
  webLinkTtlHours: {
    env: 'WEB_LINK_TTL_HOURS',
    default: '72',
    parse: integer(1),
    help: 'Hours a one-time dashboard link (sign-in link, invitation) stays valid.',
  },
  webhookAllowedTargets: {
    env: 'WEBHOOK_ALLOWED_TARGETS',
    default: '',
    parse: list,
    help: 'Comma-separated host:port or CIDR entries webhooks may reach although private, loopback or link-local (e.g. 10.0.0.0/8, hooks.internal:8443). Empty: only public addresses.',
  },
  webhookTimeoutMs: {
    env: 'WEBHOOK_TIMEOUT_MS',
    default: '10000',
    parse: integer(1),
    help: 'Time a webhook delivery may take (connect, send, answer) before it counts as failed.',
  },
  oauthRegistrationsPerHour: {
    env: 'OAUTH_REGISTRATIONS_PER_HOUR',
    default: '20',
    parse: integer(1),
    help: 'Dynamic Client Registrations (POST /oauth/register) one client address may make per hour, across every process; more are 429.',
  },
  oauthClientMetadataCaFile: {
    env: 'OAUTH_CLIENT_METADATA_CA_FILE',
    default: '',
    parse: text,
    help: 'PEM file of extra certificate authorities trusted, beside the system ones, when fetching OAuth Client ID Metadata Documents (an internal CA). Empty: the system ones only.',
  },
  scanRetentionDays: {
    env: 'SCAN_RETENTION_DAYS',
    default: '730',
    parse: integer(1),
    help: 'TTL of raw scan events in ClickHouse, in days (rollups are kept).',
  },
} satisfies Record<string, KeyDef<unknown>>;

/** The configuration, each key's value as its parser returns it. */
export type Config = { -readonly [K in keyof typeof CONFIG_KEYS]: ReturnType<(typeof CONFIG_KEYS)[K]['parse']> };

export class ConfigError extends Error {}

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function int(key: string, value: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const n = parseDecimalInteger(value);
  if (n === null || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`${key} must be an integer ${range} in decimal digits, got "${value}"`);
  }
  return n;
}

function oneOf<T extends string>(key: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(`${key} must be one of ${allowed.join(', ')}, got "${value}"`);
}

function text(value: string): string {
  return value;
}

/** Unset or empty: null. */
function optional(value: string): string | null {
  return value || null;
}

function integer(min = 0, max = Number.MAX_SAFE_INTEGER): (value: string, env: string) => number {
  return (value, env) => int(env, value, min, max);
}

function boolean(value: string, env: string): boolean {
  return bool(env, value);
}

function bool(key: string, value: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new ConfigError(`${key} must be true or false, got "${value}"`);
}

/** Reads the configuration from an environment (process.env by default); overrides win, for tests. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const values: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(CONFIG_KEYS) as [keyof Config, KeyDef<unknown>][]) {
    const v = env[def.env];
    values[name] = def.parse(v === undefined || v === '' ? def.default : v, def.env);
  }
  const cfg = { ...(values as Config), ...overrides };
  cfg.mcpAllowedOrigins = cfg.mcpAllowedOrigins.map((origin) => {
    try {
      const u = new URL(origin);
      const bare = u.pathname === '/' && !u.search && !u.hash && !u.username && !u.password;
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !bare) throw new Error();
      return u.origin;
    } catch {
      throw new ConfigError(`MCP_ALLOWED_ORIGINS entry "${origin}" is not an origin like https://app.example.com`);
    }
  });
  for (const entry of cfg.webhookAllowedTargets) {
    if (!parseAllowedTarget(entry)) {
      throw new ConfigError(
        `WEBHOOK_ALLOWED_TARGETS entry "${entry}" is neither host:port ([v6]:port) nor a CIDR like 10.0.0.0/8`,
      );
    }
  }
  for (const origin of cfg.fallbackOrigins) {
    try {
      const u = new URL(origin);
      if (u.pathname !== '/' || u.search) throw new Error();
    } catch {
      throw new ConfigError(`FALLBACK_ORIGINS entry "${origin}" is not an origin like https://qr.example.com`);
    }
  }
  if (cfg.redirectTlsPort !== null && (!cfg.redirectTlsCertFile || !cfg.redirectTlsKeyFile)) {
    throw new ConfigError(
      'REDIRECT_TLS_PORT needs REDIRECT_TLS_CERT_FILE and REDIRECT_TLS_KEY_FILE (the certificate of the shared fallback host)',
    );
  }
  return cfg;
}

/** One WEBHOOK_ALLOWED_TARGETS entry: a host (name or address) with a port, or a network. */
export type AllowedTarget =
  | { kind: 'host'; host: string; port: number }
  | { kind: 'cidr'; address: string; prefix: number; family: 'ipv4' | 'ipv6' };

export function parseAllowedTarget(entry: string): AllowedTarget | null {
  const cidr = /^\[?([0-9A-Fa-f:.]+)\]?\/(\d{1,3})$/.exec(entry);
  if (cidr) {
    const family = net.isIPv4(cidr[1]) ? 'ipv4' : net.isIPv6(cidr[1]) ? 'ipv6' : null;
    const prefix = Number(cidr[2]);
    if (!family || prefix > (family === 'ipv4' ? 32 : 128)) return null;
    return { kind: 'cidr', address: cidr[1], prefix, family };
  }
  const host = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry);
  if (!host) return null;
  const port = Number(host[3]);
  if (port < 1 || port > 65535 || (host[1] !== undefined && !net.isIPv6(host[1]))) return null;
  return { kind: 'host', host: (host[1] ?? host[2]).toLowerCase(), port };
}

/** The API's public base URL: PUBLIC_API_URL or the listener address. */
export function apiBaseUrl(cfg: Config, boundPort?: number): string {
  if (cfg.publicApiUrl) return cfg.publicApiUrl.replace(/\/+$/, '');
  const host = cfg.apiHost === '0.0.0.0' ? '127.0.0.1' : cfg.apiHost;
  return `http://${host}:${boundPort ?? cfg.apiPort}`;
}

/** The rate-limit help page linked from 429 answers: RATE_LIMIT_HELP_URL or the API's own page. */
export function rateLimitHelpUrl(cfg: Config, boundPort?: number): string {
  return cfg.rateLimitHelpUrl || `${apiBaseUrl(cfg, boundPort)}/docs/rate-limits`;
}
