// The one way an import talks to a source's API: JSON over http(s) with the source's auth header,
// a timeout, 429 answered by waiting Retry-After (seconds or an HTTP date, RFC 9110 10.2.3) up to
// a bound, a request that got no answer at all sent again (twice), and every other failure turned
// into a SourceError that says what the source answered.
// The address is the user's: it must be http(s), and a loopback or private address is refused
// unless IMPORT_ALLOW_PRIVATE_SOURCES is set (the service must not become a probe of its own network).
import dns from 'node:dns/promises';
import net from 'node:net';
import { SourceError } from './types.js';

export interface SourceHttpOptions {
  allowPrivate: boolean;
  maxRetryAfterSeconds: number;
  /** How waiting is done (tests keep the real timer; the bound keeps waits short). */
  sleep?: (ms: number) => Promise<void>;
  timeoutMs?: number;
}

const MAX_429_RETRIES = 8;
/** Network failures (no answer at all) retried before the import fails. */
const MAX_NETWORK_RETRIES = 2;
const PRIVATE = new net.BlockList();
for (const [a, p] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  PRIVATE.addSubnet(a, p, 'ipv4');
for (const [a, p] of [
  ['::1', 128],
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  PRIVATE.addSubnet(a, p, 'ipv6');

function isPrivate(address: string): boolean {
  const v4mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4mapped) return PRIVATE.check(v4mapped[1], 'ipv4');
  return PRIVATE.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');
}

/** The source's base URL, checked: http(s), no credentials in it, not private unless allowed. */
export async function checkSourceUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SourceError(`The source address "${raw.slice(0, 200)}" is not a URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new SourceError('The source address must be an http or https URL.');
  if (url.username || url.password) throw new SourceError('The source address must not carry credentials.');
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = net.isIP(host) ? [host] : (await dns.lookup(host, { all: true })).map((a) => a.address);
    if (addresses.some(isPrivate))
      throw new SourceError(`The source address ${url.host} is a loopback or private address.`);
  }
  return url;
}

/** Seconds to wait from a Retry-After value; null when absent or unreadable. */
function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the source said about an error: RFC 7807 title/detail, a message, or the start of the body. */
function describe(body: string): string {
  try {
    const j = JSON.parse(body) as Record<string, unknown>;
    const parts = [j.title, j.detail, j.message, j.description, j.error].filter((x) => typeof x === 'string');
    if (parts.length) return (parts as string[]).join(': ').slice(0, 300);
  } catch {
    // not JSON
  }
  return body.replace(/\s+/g, ' ').trim().slice(0, 200);
}

export class SourceHttp {
  constructor(
    private readonly opts: SourceHttpOptions,
    private readonly headers: Record<string, string>,
  ) {}

  /** GET a JSON document; 429 waits and retries; anything else not 2xx is a SourceError. */
  async getJson<T>(url: URL): Promise<T> {
    const sleep = this.opts.sleep ?? defaultSleep;
    let networkRetries = 0;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, {
          headers: { Accept: 'application/json', ...this.headers },
          redirect: 'error',
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        });
      } catch (err) {
        // A GET is safe to send again: a keep-alive connection the source closed while it sat
        // idle (several reads are in flight) fails the request that took it, not the import.
        if (networkRetries++ < MAX_NETWORK_RETRIES && !(err instanceof Error && err.name === 'TimeoutError')) {
          await sleep(200 * networkRetries);
          continue;
        }
        const cause = (err as { cause?: { message?: string } }).cause?.message;
        throw new SourceError(
          `The source at ${url.host} could not be reached: ${(err as Error).message}${cause ? ` (${cause})` : ''}`,
        );
      }
      const body = await res.text();
      if (res.status === 429) {
        const wait = retryAfterSeconds(res.headers.get('retry-after')) ?? 2 ** attempt;
        if (attempt >= MAX_429_RETRIES || wait > this.opts.maxRetryAfterSeconds)
          throw new SourceError(
            `The source at ${url.host} is rate limiting (429, Retry-After ${wait} s); resume the import later.`,
          );
        await sleep(wait * 1000);
        continue;
      }
      if (res.status === 401 || res.status === 403)
        throw new SourceError(
          `The source at ${url.host} refused the credentials (${res.status}): ${describe(body)}`,
          res.status,
        );
      if (!res.ok)
        throw new SourceError(
          `The source at ${url.host} answered ${res.status} for ${url.pathname}: ${describe(body) || res.statusText}`,
          res.status,
        );
      try {
        return JSON.parse(body) as T;
      } catch {
        throw new SourceError(`The source at ${url.host} answered ${url.pathname} with something that is not JSON.`);
      }
    }
  }
}
