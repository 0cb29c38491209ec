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

export function ipv4ToInt(ip: string): number {
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

/** A set of trusted proxy addresses or CIDR ranges (TRUST_PROXY). */
export function trustList(entries: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const e of entries) {
    const [addr, bits] = e.split('/');
    const ip = normaliseIp(addr);
    const type = net.isIPv6(ip) ? 'ipv6' : 'ipv4';
    if (!net.isIP(ip)) throw new Error(`TRUST_PROXY entry "${e}" is not an address or CIDR range`);
    if (bits !== undefined) list.addSubnet(ip, Number(bits), type);
    else list.addAddress(ip, type);
  }
  return list;
}

function trusted(list: net.BlockList, ip: string): boolean {
  return net.isIP(ip) !== 0 && list.check(ip, net.isIPv6(ip) ? 'ipv6' : 'ipv4');
}

/**
 * The client address: the socket peer, unless the peer is a trusted proxy, in which case the
 * X-Forwarded-For chain is walked from the right past trusted proxies to the first untrusted hop.
 */
export function clientIp(
  remote: string | undefined,
  forwardedFor: string | string[] | undefined,
  trust: net.BlockList,
): string {
  let ip = normaliseIp(remote ?? '');
  if (!forwardedFor || !trusted(trust, ip)) return ip;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map(normaliseIp)
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!net.isIP(hops[i])) break;
    ip = hops[i];
    if (!trusted(trust, ip)) break;
  }
  return ip;
}
