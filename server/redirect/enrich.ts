// What a scan says about its visitor: client address (server/http-common/client-ip.ts),
// country and network operator (the IP databases of server/geo/), device, OS and browser
// (ua-parser-js 1.x, MIT), bot (isbot), language and referrer host, and a keyed visitor hash. The
// raw address is used for the lookups and the hash, and never stored.
import crypto from 'node:crypto';
import net from 'node:net';
import { parseAgent, type AgentInfo } from '../analytics/agent.js';
import { KeptResults } from '../kept-results.js';
import type { GeoData } from '../geo/database.js';
import { ipv6ToBigInt, parseIpv4 } from '../http-common/client-ip.js';

export { parseAgent, referrerHost, type AgentInfo } from '../analytics/agent.js';

export interface NetworkInfo {
  country: string;
  provider: string;
  asn: number;
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

// ---------------------------------------------------------------------------------------------

export interface Enricher {
  network(ip: string): NetworkInfo;
  agent(ua: string): AgentInfo;
  /** primaryLanguage(), with recent headers kept. */
  language(header: string | undefined): string;
  /** Keyed hash (HMAC-SHA-256, first 53 bits) of ip + user agent, as a decimal UInt64. */
  visitorHash(ip: string, ua: string): string;
}

const AGENT_CACHE_MAX = 20_000;
/** SHA-256's block size: the HMAC key (32 bytes here) is padded to it. */
const IPAD_LENGTH = 64;

/**
 * One-shot SHA-256 whose 32 bytes come back as a one-byte string ('binary', that is latin1), by
 * crypto.hash (Node 20.12+) or a Hash object before that (engines says >=20). Not a Buffer: each
 * Buffer a call returns is an ArrayBuffer with its own malloc'd store, which the garbage collector
 * tracks and sweeps, and in the redirect's loop making those cost three times the digest
 * (docs/performance.md).
 */
const sha256: (data: Buffer) => string =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'binary')
    : (data) => crypto.createHash('sha256').update(data).digest('binary');

export function createEnricher(data: GeoData, secretKey: Buffer): Enricher {
  // User agents repeat heavily, and parsing one costs tens of microseconds: keep recent results.
  const agents = new KeptResults<AgentInfo>(AGENT_CACHE_MAX, parseAgent);
  const languages = new KeptResults<string>(AGENT_CACHE_MAX, primaryLanguage);
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
      const v4 = parseIpv4(ip);
      if (v4 === null && !net.isIPv6(ip)) return { country: '', provider: '', asn: 0 };
      let country: string;
      try {
        country = data.country.get(ip)?.country_code?.toUpperCase() ?? '';
      } catch {
        country = '';
      }
      const a = v4 !== null ? data.asn.lookupV4(v4) : data.asn.lookupV6(ipv6ToBigInt(ip));
      return { country: country.length === 2 ? country : '', provider: a?.provider ?? '', asn: a?.asn ?? 0 };
    },
    agent(ua) {
      return agents.get(ua);
    },
    language(header) {
      return header ? languages.get(header) : '';
    },
    visitorHash(ip, ua) {
      // HMAC-SHA-256 spelled out (RFC 2104: H(K^opad || H(K^ipad || m))) over reused buffers, so a
      // request makes no Hmac object (each costs an OpenSSL context and a digest lookup by name).
      let n = IPAD_LENGTH + inner.write(ip, IPAD_LENGTH, 'utf8');
      inner[n++] = 0;
      let innerHash: string;
      if (n + ua.length * 3 <= inner.length) {
        n += inner.write(ua, n, 'utf8');
        innerHash = sha256(inner.subarray(0, n));
      } else {
        innerHash = sha256(Buffer.concat([inner.subarray(0, n), Buffer.from(ua, 'utf8')]));
      }
      outer.write(innerHash, IPAD_LENGTH, 'latin1');
      const d = sha256(outer);
      // The first 53 bits (the low 21 bits of the first four bytes, then the next four): a UInt64
      // value that stays exact as a JS number, and avoids BigInt formatting on the hot path (a 53-bit
      // space makes collisions between visitors negligible).
      const high = ((d.charCodeAt(1) & 0x1f) << 16) | (d.charCodeAt(2) << 8) | d.charCodeAt(3);
      const low = d.charCodeAt(4) * 16777216 + ((d.charCodeAt(5) << 16) | (d.charCodeAt(6) << 8) | d.charCodeAt(7));
      return String(high * 4294967296 + low);
    },
  };
}
