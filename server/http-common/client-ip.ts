// The client's address behind trusted proxies (TRUST_PROXY): X-Forwarded-For is believed only
// from a trusted peer. Shared by every listener (the redirect, the API, the dashboard).
import net from 'node:net';

/** '::ffff:1.2.3.4' → '1.2.3.4'; strips a zone id. */
export function normaliseIp(ip: string): string {
  const s = ip.trim();
  if (s.startsWith('::ffff:') && net.isIPv4(s.slice(7))) return s.slice(7);
  const zone = s.indexOf('%');
  return zone === -1 ? s : s.slice(0, zone);
}

function ipv4ToInt(ip: string): number {
  const p = ip.split('.');
  return ((Number(p[0]) << 24) | (Number(p[1]) << 16) | (Number(p[2]) << 8) | Number(p[3])) >>> 0;
}

export function ipv6ToBigInt(ip: string): bigint {
  let [head, tail] = ip.includes('::') ? ip.split('::') : [ip, null];
  // An embedded IPv4 tail (::ffff:1.2.3.4 handled by normaliseIp; others like 64:ff9b::1.2.3.4).
  const lastColon = ip.lastIndexOf(':');
  const v4tail = ip.slice(lastColon + 1);
  let extra: string[] = [];
  if (net.isIPv4(v4tail)) {
    const n = ipv4ToInt(v4tail);
    extra = [(n >>> 16).toString(16), (n & 0xffff).toString(16)];
    if (tail !== null) tail = tail.slice(0, tail.length - v4tail.length).replace(/:$/, '');
    else head = head.slice(0, head.length - v4tail.length).replace(/:$/, '');
  }
  const h = head ? head.split(':') : [];
  const t = [...(tail ? tail.split(':') : []), ...extra];
  const groups = tail === null ? [...h, ...extra] : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  let n = 0n;
  for (const g of groups) n = (n << 16n) | BigInt(parseInt(g || '0', 16));
  return n;
}

/**
 * A dotted-quad IPv4 address as an unsigned 32-bit integer, or null when `ip` is not one (net.isIPv4's
 * syntax: four decimal octets 0-255, no leading zeros). Hand-written because net.isIP's regular
 * expressions and BlockList's SocketAddress objects were a quarter of the redirect's own CPU behind a
 * trusted proxy (docs/performance.md).
 */
export function parseIpv4(ip: string): number | null {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return null;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && octet === 0) return null; // a leading zero
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return null;
    } else return null;
  }
  if (dots !== 3 || digits === 0) return null;
  return value * 256 + octet;
}

/** Whether `ip` is an IPv4 or IPv6 address (net.isIP, with IPv4 checked without a regular expression). */
function isIpAddress(ip: string): boolean {
  return parseIpv4(ip) !== null || net.isIPv6(ip);
}

/** A set of trusted proxy addresses or CIDR ranges (TRUST_PROXY). */
export class TrustList {
  /** [network, mask] pairs over 32-bit integers. */
  private readonly v4: [number, number][] = [];
  /** [network, mask] pairs over 128-bit integers. */
  private readonly v6: [bigint, bigint][] = [];

  constructor(entries: string[]) {
    for (const e of entries) {
      const [addr, bits] = e.split('/');
      const ip = normaliseIp(addr);
      const v4 = parseIpv4(ip);
      if (v4 === null && !net.isIPv6(ip)) throw new Error(`TRUST_PROXY entry "${e}" is not an address or CIDR range`);
      const width = v4 !== null ? 32 : 128;
      const prefix = bits === undefined ? width : Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > width || !/^\d*$/.test(bits ?? ''))
        throw new Error(`TRUST_PROXY entry "${e}" has an invalid prefix length`);
      if (v4 !== null) {
        const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
        this.v4.push([(v4 & mask) >>> 0, mask]);
      } else {
        const mask = ((1n << BigInt(prefix)) - 1n) << BigInt(128 - prefix);
        this.v6.push([ipv6ToBigInt(ip) & mask, mask]);
      }
    }
  }

  /** Whether `ip` (normalised) is one of the trusted addresses or in one of the ranges. */
  has(ip: string): boolean {
    const v4 = parseIpv4(ip);
    if (v4 !== null) {
      for (const [network, mask] of this.v4) if ((v4 & mask) >>> 0 === network) return true;
      return false;
    }
    if (!this.v6.length || !net.isIPv6(ip)) return false;
    const n = ipv6ToBigInt(ip);
    for (const [network, mask] of this.v6) if ((n & mask) === network) return true;
    return false;
  }
}

/** The trusted proxies of TRUST_PROXY's entries (addresses or CIDR ranges); throws on a bad entry. */
export function trustList(entries: string[]): TrustList {
  return new TrustList(entries);
}

/**
 * The client address: the socket peer, unless the peer is a trusted proxy, in which case the
 * X-Forwarded-For chain is walked from the right past trusted proxies to the first untrusted hop.
 */
export function clientIp(
  remote: string | undefined,
  forwardedFor: string | string[] | undefined,
  trust: TrustList,
): string {
  let ip = normaliseIp(remote ?? '');
  if (!forwardedFor || !trust.has(ip)) return ip;
  const chain = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
  // Walked from the right without splitting the header into an array first.
  let end = chain.length;
  while (end > 0) {
    const start = chain.lastIndexOf(',', end - 1) + 1;
    const hop = normaliseIp(chain.slice(start, end));
    end = start - 1;
    if (!hop) continue;
    if (!isIpAddress(hop)) break;
    ip = hop;
    if (!trust.has(ip)) break;
  }
  return ip;
}
