// What a scan says about its visitor: client address (X-Forwarded-For only from trusted proxies),
// country (GeoIP mmdb), network operator and ASN (ASN ranges), device, OS and browser (ua-parser-js
// 1.x, MIT), bot (isbot), language and referrer host, and a keyed visitor hash. The raw address is
// used for the lookups and the hash, and never stored.
//
// Data: @ip-location-db/geo-whois-asn-country-mmdb and @ip-location-db/asn, CC BY 4.0 (NRO,
// RouteViews, DB-IP); credited in docs/redirect.md.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Reader, type CountryResponse } from 'maxmind';
import { isbot } from 'isbot';
import UAParser from 'ua-parser-js';

const require = createRequire(import.meta.url);

export interface NetworkInfo {
  country: string;
  provider: string;
  asn: number;
}

export interface AgentInfo {
  device: string;
  os: string;
  browser: string;
  isBot: boolean;
}

// ---------------------------------------------------------------------------------------------
// ASN ranges: sorted arrays searched by binary search (≈410k IPv4 and ≈100k IPv6 ranges).

export class AsnTable {
  constructor(
    private readonly v4Start: Uint32Array,
    private readonly v4End: Uint32Array,
    private readonly v4Asn: Uint32Array,
    private readonly v4Name: Uint32Array,
    private readonly v6Start: bigint[],
    private readonly v6End: bigint[],
    private readonly v6Asn: Uint32Array,
    private readonly v6Name: Uint32Array,
    private readonly names: string[],
  ) {}

  get size(): number {
    return this.v4Start.length + this.v6Start.length;
  }

  lookupV4(ip: number): { asn: number; provider: string } | null {
    let lo = 0;
    let hi = this.v4Start.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.v4Start[mid] <= ip) lo = mid + 1;
      else hi = mid - 1;
    }
    // hi: the last range starting at or before ip.
    if (hi < 0 || this.v4End[hi] < ip) return null;
    return { asn: this.v4Asn[hi], provider: this.names[this.v4Name[hi]] };
  }

  lookupV6(ip: bigint): { asn: number; provider: string } | null {
    let lo = 0;
    let hi = this.v6Start.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.v6Start[mid] <= ip) lo = mid + 1;
      else hi = mid - 1;
    }
    if (hi < 0 || this.v6End[hi] < ip) return null;
    return { asn: this.v6Asn[hi], provider: this.names[this.v6Name[hi]] };
  }
}

/** Splits one CSV line of start,end,asn,name (the name may be quoted with "" escapes). */
function splitAsnLine(line: string): [string, string, string, string] | null {
  const a = line.indexOf(',');
  const b = line.indexOf(',', a + 1);
  const c = line.indexOf(',', b + 1);
  if (a < 0 || b < 0 || c < 0) return null;
  let name = line.slice(c + 1);
  if (name.startsWith('"')) name = name.slice(1, name.endsWith('"') ? -1 : undefined).replace(/""/g, '"');
  return [line.slice(0, a), line.slice(a + 1, b), line.slice(b + 1, c), name];
}

async function readAsnCsv(
  file: string,
  names: string[],
  nameIndex: Map<string, number>,
): Promise<{ starts: string[]; ends: string[]; asns: number[]; nameIds: number[] }> {
  const text = await fs.readFile(file, 'utf8');
  const starts: string[] = [];
  const ends: string[] = [];
  const asns: number[] = [];
  const nameIds: number[] = [];
  let from = 0;
  while (from < text.length) {
    let to = text.indexOf('\n', from);
    if (to === -1) to = text.length;
    const line = text.slice(from, to).trimEnd();
    from = to + 1;
    const parts = line ? splitAsnLine(line) : null;
    if (!parts) continue;
    let id = nameIndex.get(parts[3]);
    if (id === undefined) {
      id = names.length;
      names.push(parts[3]);
      nameIndex.set(parts[3], id);
    }
    starts.push(parts[0]);
    ends.push(parts[1]);
    asns.push(Number(parts[2]) >>> 0);
    nameIds.push(id);
  }
  return { starts, ends, asns, nameIds };
}

export async function loadAsnTable(dir: string): Promise<AsnTable> {
  const names: string[] = [];
  const nameIndex = new Map<string, number>();
  const v4 = await readAsnCsv(path.join(dir, 'asn-ipv4-num.csv'), names, nameIndex);
  const v6 = await readAsnCsv(path.join(dir, 'asn-ipv6-num.csv'), names, nameIndex);
  // The files are sorted by start; sort anyway, cheaply, in case a release is not.
  const order4 = [...v4.starts.keys()].map((i) => [Number(v4.starts[i]), i] as const).sort((x, y) => x[0] - y[0]);
  const v4Start = new Uint32Array(order4.length);
  const v4End = new Uint32Array(order4.length);
  const v4Asn = new Uint32Array(order4.length);
  const v4Name = new Uint32Array(order4.length);
  order4.forEach(([start, i], k) => {
    v4Start[k] = start;
    v4End[k] = Number(v4.ends[i]);
    v4Asn[k] = v4.asns[i];
    v4Name[k] = v4.nameIds[i];
  });
  const order6 = v6.starts
    .map((s, i) => [BigInt(s), i] as const)
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const v6Start = order6.map(([s]) => s);
  const v6End = order6.map(([, i]) => BigInt(v6.ends[i]));
  const v6Asn = Uint32Array.from(order6.map(([, i]) => v6.asns[i]));
  const v6Name = Uint32Array.from(order6.map(([, i]) => v6.nameIds[i]));
  return new AsnTable(v4Start, v4End, v4Asn, v4Name, v6Start, v6End, v6Asn, v6Name, names);
}

// ---------------------------------------------------------------------------------------------
// Addresses.

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

// ---------------------------------------------------------------------------------------------
// Headers.

/** Primary tag of the most preferred Accept-Language entry, lower case; '' when none. */
export function primaryLanguage(header: string | undefined): string {
  if (!header) return '';
  let best = '';
  let bestQ = -1;
  for (const part of header.split(',')) {
    const [tag, ...params] = part.trim().split(';');
    const t = tag.trim().toLowerCase();
    if (!t || t === '*') continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q=([0-9.]+)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (q > bestQ) {
      bestQ = q;
      best = t;
    }
  }
  const primary = best.split(/[-_]/)[0];
  return /^[a-z]{1,8}$/.test(primary) ? primary : '';
}

export function referrerHost(header: string | undefined): string {
  if (!header) return '';
  try {
    return new URL(header).hostname.toLowerCase().slice(0, 253);
  } catch {
    return '';
  }
}

const DESKTOP_OS = new Set([
  'windows',
  'mac os',
  'macos',
  'linux',
  'ubuntu',
  'debian',
  'fedora',
  'chromium os',
  'chrome os',
  'freebsd',
  'openbsd',
  'netbsd',
]);

/** Device, OS, browser and bot of a user agent; desktop when a desktop OS and no device type. */
export function parseAgent(ua: string): AgentInfo {
  if (!ua) return { device: 'other', os: '', browser: '', isBot: false };
  const r = new UAParser(ua).getResult();
  const os = r.os.name ?? '';
  const browser = r.browser.name ?? '';
  const bot = isbot(ua);
  let device: string;
  if (bot) device = 'bot';
  else if (r.device.type === 'mobile') device = 'mobile';
  else if (r.device.type === 'tablet') device = 'tablet';
  else if (r.device.type) device = 'other';
  else if (DESKTOP_OS.has(os.toLowerCase())) device = 'desktop';
  else device = 'other';
  return { device, os, browser, isBot: bot };
}

// ---------------------------------------------------------------------------------------------

export interface Enricher {
  network(ip: string): NetworkInfo;
  agent(ua: string): AgentInfo;
  /** primaryLanguage(), with recent headers kept. */
  language(header: string | undefined): string;
  /** Keyed hash (HMAC-SHA-256, first 53 bits) of ip + user agent, as a decimal UInt64. */
  visitorHash(ip: string, ua: string): string;
}

/** The ip-location-db mmdb stores a bare `country_code`, not MaxMind's nested records. */
type CountryCodeRecord = CountryResponse & { country_code?: string };

export interface GeoData {
  country: Reader<CountryCodeRecord>;
  asn: AsnTable;
}

const AGENT_CACHE_MAX = 20_000;
/** SHA-256's block size: the HMAC key (32 bytes here) is padded to it. */
const IPAD_LENGTH = 64;

/** One-shot SHA-256 (crypto.hash, Node 20.12+; a Hash object before that: engines says >=20). */
const sha256: (data: Buffer) => Buffer =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'buffer')
    : (data) => crypto.createHash('sha256').update(data).digest();

export function createEnricher(data: GeoData, secretKey: Buffer): Enricher {
  // User agents repeat heavily, and parsing one costs tens of microseconds: keep recent results.
  const agents = new Map<string, AgentInfo>();
  const languages = new Map<string, string>();
  const hashKey = crypto.createHmac('sha256', secretKey).update('visitor-hash').digest();
  // inner = K^ipad followed by the message; outer = K^opad followed by the inner hash.
  const inner = Buffer.alloc(IPAD_LENGTH + 4096);
  const outer = Buffer.alloc(IPAD_LENGTH + 32);
  for (let i = 0; i < IPAD_LENGTH; i++) {
    inner[i] = (hashKey[i] ?? 0) ^ 0x36;
    outer[i] = (hashKey[i] ?? 0) ^ 0x5c;
  }
  return {
    network(ip) {
      if (!ip || !net.isIP(ip)) return { country: '', provider: '', asn: 0 };
      let country: string;
      try {
        country = data.country.get(ip)?.country_code?.toUpperCase() ?? '';
      } catch {
        country = '';
      }
      const a = net.isIPv4(ip) ? data.asn.lookupV4(ipv4ToInt(ip)) : data.asn.lookupV6(ipv6ToBigInt(ip));
      return { country: country.length === 2 ? country : '', provider: a?.provider ?? '', asn: a?.asn ?? 0 };
    },
    agent(ua) {
      let info = agents.get(ua);
      if (!info) {
        if (agents.size >= AGENT_CACHE_MAX) agents.clear();
        info = parseAgent(ua);
        agents.set(ua, info);
      }
      return info;
    },
    language(header) {
      if (!header) return '';
      let lang = languages.get(header);
      if (lang === undefined) {
        if (languages.size >= AGENT_CACHE_MAX) languages.clear();
        lang = primaryLanguage(header);
        languages.set(header, lang);
      }
      return lang;
    },
    visitorHash(ip, ua) {
      // HMAC-SHA-256 spelled out (RFC 2104: H(K^opad || H(K^ipad || m))) over reused buffers, so a
      // request makes no Hmac object (each costs an OpenSSL context and a digest lookup by name).
      let n = IPAD_LENGTH + inner.write(ip, IPAD_LENGTH, 'utf8');
      inner[n++] = 0;
      let innerHash: Buffer;
      if (n + ua.length * 3 <= inner.length) {
        n += inner.write(ua, n, 'utf8');
        innerHash = sha256(inner.subarray(0, n));
      } else {
        innerHash = sha256(Buffer.concat([inner.subarray(0, n), Buffer.from(ua, 'utf8')]));
      }
      innerHash.copy(outer, IPAD_LENGTH);
      const d = sha256(outer);
      // The first 53 bits: a UInt64 value that stays exact as a JS number, and avoids BigInt
      // formatting on the hot path (a 53-bit space makes collisions between visitors negligible).
      return String((d.readUInt32BE(0) & 0x1fffff) * 4294967296 + d.readUInt32BE(4));
    },
  };
}

// The databases are immutable files shipped in npm packages: loaded once per process, shared by
// every redirect listener the process runs (tests start several).
let geoData: Promise<GeoData> | null = null;

export function loadGeoData(): Promise<GeoData> {
  geoData ??= (async () => {
    const mmdb = require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');
    const asnDir = path.dirname(require.resolve('@ip-location-db/asn/package.json'));
    const [country, asn] = await Promise.all([
      fs.readFile(mmdb).then((buf) => new Reader<CountryCodeRecord>(buf)),
      loadAsnTable(asnDir),
    ]);
    return { country, asn };
  })();
  geoData.catch(() => {
    geoData = null;
  });
  return geoData;
}
