// The realistic traffic of the redirect benchmarks (issue 32): many codes, real browser and bot user
// agents, client addresses through X-Forwarded-For, many languages. The bench writes the requests to
// a file once; wrk's report script (wrk-report.lua, WRK_MIX) reads it and sends them in turn, the same
// file for the bare server and for the service, so both answer the same requests.
//   - user agents: the `user-agents` package's list of real browser strings (every distinct one) and
//     the `crawler-user-agents` package's bot strings, about 10% of the requests;
//   - addresses: 10,000 distinct public IPv4 addresses, one per request in turn, in X-Forwarded-For
//     (the service runs with TRUST_PROXY=127.0.0.1 so it believes them);
//   - languages: 20 Accept-Language values;
//   - codes: the paths given, most traffic on a few (a Zipf-like popularity), every one requested.
// The file is made from a fixed seed: every run sends the same requests in the same order.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const MIX_LANGUAGES = [
  'en-US,en;q=0.9',
  'de-DE,de;q=0.9,en;q=0.8',
  'fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7',
  'es-ES,es;q=0.9',
  'it-IT,it;q=0.9,en;q=0.8',
  'pt-BR,pt;q=0.9,en-US;q=0.8',
  'nl-NL,nl;q=0.9,en;q=0.8',
  'pl-PL,pl;q=0.9',
  'ru-RU,ru;q=0.9,en;q=0.8',
  'ja-JP,ja;q=0.9',
  'zh-CN,zh;q=0.9',
  'ko-KR,ko;q=0.9,en-US;q=0.8',
  'tr-TR,tr;q=0.9',
  'sv-SE,sv;q=0.9,en;q=0.8',
  'da-DK,da;q=0.9',
  'fi-FI,fi;q=0.9,en;q=0.8',
  'nb-NO,nb;q=0.9,no;q=0.8',
  'cs-CZ,cs;q=0.9',
  'ar-SA,ar;q=0.9,en;q=0.8',
  'hi-IN,hi;q=0.9,en-IN;q=0.8',
];

/** The slug (under the organization's) of the mix's code number `i`: m0000, m0001, ... */
export function mixSlug(i: number): string {
  return `m${String(i).padStart(4, '0')}`;
}

export const MIX_ADDRESSES = 10_000;
/** Requests in the file: every address twice; wrk cycles through them. */
const REQUESTS = 2 * MIX_ADDRESSES;

/** A small seeded generator (mulberry32), so the mix is the same in every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Real user agents: every distinct browser string of `user-agents`, and bot strings. */
export function mixUserAgents(): { browsers: string[]; bots: string[] } {
  const browsers = [
    // The package exports its generator only; its list is the JSON file beside it.
    ...new Set(
      (
        JSON.parse(
          readFileSync(path.join(path.dirname(require.resolve('user-agents')), 'user-agents.json'), 'utf8'),
        ) as { userAgent: string }[]
      ).map((u) => u.userAgent),
    ),
  ];
  const bots = [
    ...new Set((require('crawler-user-agents') as { instances?: string[] }[]).flatMap((c) => c.instances ?? [])),
  ].filter((ua) => !/[\t\r\n]/.test(ua));
  return { browsers, bots };
}

/** A public IPv4 address (none in the private, loopback, link-local, multicast or reserved ranges). */
function publicAddress(rand: () => number): string {
  for (;;) {
    const a = 1 + Math.floor(rand() * 223);
    const b = Math.floor(rand() * 256);
    if (a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32)) continue;
    if ((a === 192 && b === 168) || (a === 100 && b >= 64 && b < 128)) continue;
    return `${a}.${b}.${Math.floor(rand() * 256)}.${1 + Math.floor(rand() * 254)}`;
  }
}

export interface MixSummary {
  requests: number;
  paths: number;
  userAgents: number;
  bots: number;
  addresses: number;
  languages: number;
}

/** Writes the mix for `paths` (one request a line: path, user agent, language, address). */
export async function writeTrafficMix(file: string, paths: string[]): Promise<MixSummary> {
  const rand = seeded(20261127);
  const { browsers, bots } = mixUserAgents();
  const addresses = new Set<string>();
  while (addresses.size < MIX_ADDRESSES) addresses.add(publicAddress(rand));
  const addressList = [...addresses];
  const lines: string[] = [];
  const used = { paths: new Set<string>(), uas: new Set<string>(), bots: new Set<string>() };
  for (let i = 0; i < REQUESTS; i++) {
    // The first pass requests every path once; after that, popularity falls with the rank (u^3).
    const p = i < paths.length ? paths[i] : paths[Math.floor(rand() ** 3 * paths.length)];
    const bot = rand() < 0.1;
    const ua = bot ? bots[Math.floor(rand() * bots.length)] : browsers[i % browsers.length];
    const lang = MIX_LANGUAGES[Math.floor(rand() * MIX_LANGUAGES.length)];
    lines.push(`${p}\t${ua}\t${lang}\t${addressList[i % addressList.length]}`);
    used.paths.add(p);
    (bot ? used.bots : used.uas).add(ua);
  }
  // Shuffled, so wrk's connections do not walk the codes in order.
  for (let i = lines.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [lines[i], lines[j]] = [lines[j], lines[i]];
  }
  await fs.writeFile(file, lines.join('\n') + '\n');
  return {
    requests: lines.length,
    paths: used.paths.size,
    userAgents: used.uas.size,
    bots: used.bots.size,
    addresses: addressList.length,
    languages: MIX_LANGUAGES.length,
  };
}

/**
 * Requests every code of the mix once, a few at a time, so that the measured run finds every code
 * in the service's cache (a short wrk warm-up on a loaded machine reaches only some of them, and the
 * rest would be first lookups in Postgres inside the measured run).
 */
export async function warmMixCodes(origin: string, host: string, paths: string[]): Promise<void> {
  // node:http rather than fetch, which does not send a Host header of the caller's.
  const get = (p: string) =>
    new Promise<number>((resolve, reject) => {
      http
        .get(origin + p, { headers: { Host: host } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject);
    });
  for (let i = 0; i < paths.length; i += 16) {
    await Promise.all(
      paths.slice(i, i + 16).map(async (p) => {
        const status = await get(p);
        if (status !== 302) throw new Error(`warm-up: ${p} answered ${status}`);
      }),
    );
  }
}

/** The GS1 product the redirect benchmarks resolve (`/01/<gtin>/10/<lot>`): its GTIN and links. */
export const BENCH_GS1_PRODUCT = {
  gtin: '09506000134352',
  links: [
    { link_type: 'gs1:pip', href: 'https://example.com/rice', title: 'Product page', default: true },
    {
      link_type: 'gs1:pip',
      href: 'https://example.com/de/reis',
      title: 'Produktseite',
      hreflang: ['de'],
      default: true,
    },
    { link_type: 'gs1:recipeInfo', href: 'https://example.com/recipes', title: 'Recipes', hreflang: ['en'] },
  ],
};
