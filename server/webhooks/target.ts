// Where a webhook (or any request the service makes to an address a client names: OAuth client
// metadata documents) may go, and the one HTTP request of a delivery attempt or a fetch.
//
// SSRF: the URL's host is resolved first and every address it resolves to must be public, unless
// the operator allows the target in WEBHOOK_ALLOWED_TARGETS (host:port or CIDR). The request then
// connects to the address that was checked, so a second DNS answer cannot redirect it (DNS
// rebinding). Redirects are never followed, and the whole attempt has one deadline.
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { parseAllowedTarget, type AllowedTarget } from '../config.js';

/** Special-purpose ranges (IANA registries) a webhook never reaches unless allowed. */
const BLOCKED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const BLOCKED_V6 = [
  '::/127',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/23',
  '2001:db8::/32',
  '2002::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

function blockList(ranges: readonly string[], family: 'ipv4' | 'ipv6', list = new net.BlockList()): net.BlockList {
  for (const r of ranges) {
    const [address, prefix] = r.split('/');
    list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

const BLOCKED = blockList(BLOCKED_V6, 'ipv6', blockList(BLOCKED_V4, 'ipv4'));

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it maps. */
function unmapped(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1] : address;
}

export function isPublicAddress(address: string): boolean {
  const a = unmapped(address);
  const family = net.isIPv4(a) ? 'ipv4' : 'ipv6';
  return !BLOCKED.check(a, family);
}

export class TargetPolicy {
  private readonly hosts: { host: string; port: number }[] = [];
  private readonly networks = new net.BlockList();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const t = parseAllowedTarget(entry) as AllowedTarget;
      if (t.kind === 'host') this.hosts.push({ host: t.host.toLowerCase(), port: t.port });
      else this.networks.addSubnet(t.address, t.prefix, t.family);
    }
  }

  /** Whether `address`, resolved from the URL's `host`, may be reached on `port`. */
  allows(host: string, address: string, port: number): boolean {
    const a = unmapped(address);
    if (isPublicAddress(a)) return true;
    if (this.networks.check(a, net.isIPv4(a) ? 'ipv4' : 'ipv6')) return true;
    const h = host.toLowerCase().replace(/^\[|\]$/g, '');
    return this.hosts.some((t) => t.port === port && (t.host === h || t.host === a));
  }
}

export function effectivePort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** A refusal found before any request is made (the URL's host is not allowed). */
class TargetRefused extends Error {}

/** Resolves the host and returns the address to connect to, or throws TargetRefused. */
async function resolveTarget(url: URL, policy: TargetPolicy): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = effectivePort(url);
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await dns.lookup(host, { all: true, verbatim: true });
    } catch (err) {
      throw new TargetRefused(`DNS lookup of ${host} failed (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
  }
  const refused = addresses.find((a) => !policy.allows(host, a.address, port));
  if (refused || !addresses.length) {
    throw new TargetRefused(
      `${host} resolves to ${refused?.address ?? 'no address'}, a private, loopback or link-local address; ` +
        'the operator can allow it in WEBHOOK_ALLOWED_TARGETS.',
    );
  }
  return { address: addresses[0].address, family: addresses[0].family === 6 ? 6 : 4 };
}

/** Keeps connections to one endpoint open across the attempts of a drain (close it with destroy()). */
export function endpointAgent(url: URL, maxSockets: number): http.Agent {
  return url.protocol === 'https:'
    ? new https.Agent({ keepAlive: true, maxSockets })
    : new http.Agent({ keepAlive: true, maxSockets });
}

export interface PostOutcome {
  /** The response status, when one came. */
  status: number | null;
  /** Milliseconds from the start of the attempt to the end of the response (or the failure). */
  latencyMs: number;
  /** Why the attempt failed without a response, or why a response is not a success. */
  error: string | null;
  /** Seconds asked for by a Retry-After header, if any. */
  retryAfter: number | null;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

export interface RequestOptions {
  policy: TargetPolicy;
  timeoutMs: number;
  agent?: http.Agent;
  /** Extra certificate authorities for https, beside the system ones. */
  ca?: string;
  /** The answer's body is read up to this many bytes (default 64 KiB); a longer one is cut off. */
  maxBytes?: number;
}

export interface RequestOutcome extends PostOutcome {
  /** The response body as read (at most maxBytes). */
  body: Buffer;
  /** Whether the body was longer than maxBytes (and so cut off). */
  truncated: boolean;
  contentType: string;
  /** The response's headers (empty when there was none). */
  headers: http.IncomingHttpHeaders;
}

/**
 * One request to the URL through the checked address (the SSRF rules above); never follows a
 * redirect, one deadline for the whole exchange, the body read up to a limit. Webhook deliveries
 * POST with it; OAuth client metadata documents are fetched with it.
 */
export async function requestOnce(
  url: URL,
  init: { method: 'GET' | 'POST'; body?: string; headers: Record<string, string> },
  opts: RequestOptions,
): Promise<RequestOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const maxBytes = opts.maxBytes ?? MAX_RESPONSE_BYTES;
  const empty = { body: Buffer.alloc(0), truncated: false, contentType: '', headers: {} };
  let target: { address: string; family: 4 | 6 };
  try {
    target = await resolveTarget(url, opts.policy);
  } catch (err) {
    if (err instanceof TargetRefused)
      return { status: null, latencyMs: elapsed(), error: err.message, retryAfter: null, ...empty };
    throw err;
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<RequestOutcome>((resolve) => {
    let settled = false;
    const finish = (o: Omit<RequestOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...o, latencyMs: elapsed() });
    };
    const headers: Record<string, string> = { 'user-agent': 'qr-service/1', ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const req = client.request(
      url,
      {
        method: init.method,
        agent: opts.agent ?? false,
        signal: deadline,
        headers,
        ...(opts.ca && url.protocol === 'https:' ? { ca: [...tls.rootCertificates, opts.ca] } : {}),
        // Connect to the address that was checked, whatever the resolver would say now.
        lookup: (_host, options, cb) => {
          const o = options as { all?: boolean };
          if (o.all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
          else cb(null, target.address, target.family);
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let seen = 0;
        let cut = false;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > maxBytes) {
            cut = true;
            res.destroy();
          } else chunks.push(chunk);
        });
        const done = (complete: boolean) => {
          const status = res.statusCode ?? 0;
          const retryAfter = Number(res.headers['retry-after']);
          let error: string | null = null;
          if (!cut && !complete && deadline.aborted) error = `The answer did not finish within ${opts.timeoutMs} ms.`;
          else if (status >= 300 && status < 400)
            error = `Redirect not followed (${status} to ${res.headers.location ?? '?'}).`;
          else if (status < 200 || status >= 300) error = `The endpoint answered ${status}.`;
          finish({
            status,
            error,
            retryAfter: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
            body: Buffer.concat(chunks),
            truncated: cut,
            contentType: String(res.headers['content-type'] ?? ''),
            headers: res.headers,
          });
        };
        res.on('end', () => done(true));
        res.on('close', () => done(false));
        res.on('error', () => done(false));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      const timedOut = deadline.aborted;
      finish({
        status: null,
        error: timedOut ? `No answer within ${opts.timeoutMs} ms.` : `Request failed: ${err.code ?? err.message}.`,
        retryAfter: null,
        ...empty,
      });
    });
    req.end(init.body);
  });
}

/** POSTs the body once to the URL through the checked address; never follows a redirect. */
export async function postOnce(
  url: URL,
  body: string,
  headers: Record<string, string>,
  opts: { policy: TargetPolicy; timeoutMs: number; agent?: http.Agent },
): Promise<PostOutcome> {
  const outcome = await requestOnce(
    url,
    {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'qr-service-webhooks/1', ...headers },
    },
    opts,
  );
  return { status: outcome.status, latencyMs: outcome.latencyMs, error: outcome.error, retryAfter: outcome.retryAfter };
}
