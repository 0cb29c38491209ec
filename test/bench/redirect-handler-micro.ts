// A micro-benchmark of the redirect's request handler alone (no sockets, no stores): fake request
// and response objects, a cached domain and code, the real enricher, counters and scan buffer.
// Measures the handler's own CPU per request, which the full bench (redirect.ts) cannot separate
// from the HTTP stack and the load generator on a shared machine.
//   node --import tsx test/bench/redirect-handler-micro.ts
//   MIX=1 node --import tsx test/bench/redirect-handler-micro.ts   # the realistic mix of make bench-redirect
//                                   (traffic-mix.ts: 1,000 codes, real user agents, X-Forwarded-For, languages)
//   GS1=1 node --import tsx test/bench/redirect-handler-micro.ts   # the GS1 row of make bench-redirect: a lot of
//                                   the bench's product resolved to its default link (its scan, with the GS1 dimensions)
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type http from 'node:http';
import { REDIRECT_SCAN_COLUMNS as SCAN_COLUMNS } from '../../server/analytics/scan-event.js';
import { RedirectHandler } from '../../server/redirect/handler.js';
import { encodeScanRow, type ActionRow, type OrphanRow, type ScanRow } from '../../server/redirect/scan-rows.js';
import type { RedirectCache } from '../../server/redirect/cache.js';
import type { ChallengeCache } from '../../server/redirect/acme-challenge.js';
import { RedirectCounters } from '../../server/redirect/counters.js';
import { loadGeoData } from '../../server/geo/database.js';
import { createEnricher } from '../../server/redirect/enrich.js';
import { ScanBuffer } from '../../server/redirect/scan-buffer.js';
import type { AppContext } from '../../server/context.js';
import type { ClickHouseClient } from '../../server/stores/clickhouse.js';
import { createLogger } from '../../server/logger.js';
import { BENCH_GS1_PRODUCT, mixSlug, writeTrafficMix } from './traffic-mix.js';

const log = createLogger('silent');
const domain = {
  id: 1,
  orgId: null,
  orgSlug: null,
  type: 'fallback' as const,
  active: true,
  rootRedirect: null,
  notFoundRedirect: null,
};
const settings = {
  id: 7,
  status: 'active',
  destination: 'https://example.com/landing?from=qr',
  routing: null,
  schedule: null,
  dateBegin: null,
  expireAt: null,
  utmParams: null,
};
const code = {
  id: 7,
  orgId: 3,
  brandId: 0,
  domainId: 1,
  domainType: 'fallback',
  settings,
  parsed: { rules: [], schedule: null, destination: 'https://example.com/landing?from=qr' },
  passwordHash: null,
  redirectCap: null,
  prelander: null,
  type: 'url',
  landing: null,
  pixels: null,
  conversionTracking: false,
};
const mixed = process.env.MIX === '1';
const gs1 = process.env.GS1 === '1';
// The bench's gs1 product (test/bench/redirect-server.ts) as the cache holds it: read as
// findGs1CodesForScan reads it (levels least specific first, each with its chain when the module
// resolves chains at read time), so the same file measures a version before that too.
const gs1Links = (await import('../../server/qr-codes/gs1-links.js')) as Record<string, unknown>;
const gs1Code: Record<string, unknown> = {
  id: 9,
  orgId: 3,
  brandId: 0,
  domainId: 1,
  domainType: 'fallback',
  key: { gtin: BENCH_GS1_PRODUCT.gtin },
  links: BENCH_GS1_PRODUCT.links,
  dateBegin: null,
  expireAt: null,
  schedule: null,
  redirectCap: null,
};
if (typeof gs1Links.chainOf === 'function') gs1Code.chain = gs1Links.chainOf(gs1Code, [gs1Code]);
const gs1Entry = { orgId: 3, codes: [gs1Code] };
// With MIX=1, one code per slug of the mix (ids 1000 ...), as the cache would hold them.
const codes = new Map<string, typeof code>();
const cache = {
  peekDomain: () => domain,
  peekGs1: () => gs1Entry,
  peekCode: (key: string) => {
    if (!mixed) return code;
    let c = codes.get(key);
    if (!c) codes.set(key, (c = { ...code, id: 1000 + codes.size }));
    return c;
  },
} as unknown as RedirectCache;
const app = {
  config: { trustProxy: mixed ? ['127.0.0.1'] : [] },
  clock: { now: () => new Date() },
  log,
  secretKey: crypto.randomBytes(32),
} as unknown as AppContext;
const client = {} as ClickHouseClient;
const buffer = <R extends object>(columns: readonly (keyof R & string)[], encode?: (row: R) => string) =>
  new ScanBuffer<R>({ client, table: 'x.y', columns, encode, spillDir: '/tmp', log, maxRows: 1e9 });
const scans = buffer<ScanRow>(SCAN_COLUMNS, encodeScanRow);
const orphans = buffer<OrphanRow>(['scan_id']);
const counters = new RedirectCounters(null as never, log);
const handler = new RedirectHandler(
  app,
  createEnricher(await loadGeoData(), app.secretKey),
  cache,
  counters,
  scans,
  orphans,
  buffer<ActionRow>(['action_id']),
  null as unknown as ChallengeCache, // no ACME paths here
);

const headers = {
  host: 'localhost:3001',
  'user-agent':
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'accept-language': 'en-GB,en;q=0.9',
};
let status = 0;
const res = {
  writeHead: (s: number) => (status = s),
  end: () => undefined,
  headersSent: false,
} as unknown as http.ServerResponse;
const n = Number(process.env.N ?? 300_000);
const mixFile = path.join(os.tmpdir(), `qr-bench-micro-mix-${process.pid}.tsv`);
const mixRequests = mixed
  ? await (async () => {
      await writeTrafficMix(
        mixFile,
        Array.from({ length: 1000 }, (_, i) => `/bench/${mixSlug(i)}`),
      );
      const lines = (await fs.readFile(mixFile, 'utf8')).trim().split('\n');
      await fs.rm(mixFile);
      return lines.map((l) => {
        const [url, ua, lang, xff] = l.split('\t');
        return {
          url,
          headers: { host: headers.host, 'user-agent': ua, 'accept-language': lang, 'x-forwarded-for': xff },
        };
      });
    })()
  : [];
// POLLUTE=<KiB>: touch that much memory before each request, as the kernel's network path and the
// load generator do between two requests of a real run, so the handler runs with colder caches.
// The touching alone is timed in rounds of its own and subtracted (best of five rounds each).
const pollute = new Uint8Array(Number(process.env.POLLUTE ?? 0) * 1024);
let sink = 0;
function touch(): void {
  for (let i = 0; i < pollute.length; i += 64) sink += pollute[i]++;
}
function round(withHandler: boolean): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    touch();
    if (!withHandler) continue;
    const m = mixed ? mixRequests[i % mixRequests.length] : null;
    const req = {
      method: 'GET',
      url: m ? m.url : gs1 ? `/bench/01/${BENCH_GS1_PRODUCT.gtin}/10/LOT1` : '/bench/go',
      headers: m ? { ...m.headers } : { ...headers, 'user-agent': headers['user-agent'] + ' ' },
      socket: { remoteAddress: '127.0.0.1' },
    } as unknown as http.IncomingMessage;
    handler.listener(req, res);
    if (scans.pending >= 10_000) {
      const b = scans as unknown as { openBytes: number; openRows: number };
      b.openBytes = 0;
      b.openRows = 0;
    }
  }
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}
const touchOnly: number[] = [];
const both: number[] = [];
// ROUNDS=1 with N=0 and N=<n> under `valgrind --tool=callgrind`: the difference of the two
// instruction counts over n is the handler's instructions per request (repeatable on a busy machine).
const rounds = Number(process.env.ROUNDS ?? 5);
for (let r = 0; r < rounds; r++) {
  touchOnly.push(round(false));
  both.push(round(true));
}
process.stdout.write(
  `handler${mixed ? ' (realistic mix)' : gs1 ? ' (GS1 resolution)' : ''}: ${(Math.min(...both) - Math.min(...touchOnly)).toFixed(2)} µs CPU per request ` +
    `(status ${status}, ${pollute.length / 1024} KiB touched before each${sink < 0 ? '' : ''})\n`,
);
