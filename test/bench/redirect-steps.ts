// Where a redirect's CPU goes in a server, step by step (docs/performance.md, "The redirect's work
// step by step"): `node --import tsx test/bench/redirect-steps.ts`.
//
// A bare node:http server answering the redirect benchmark's 302, its answers of one round of I/O
// sent together after it (setImmediate, as the redirect's journal group does), and then the same
// server with the redirect's own per-request work added one step at a time, each through the
// service's own functions:
//   0. nothing but the deferred 302;
//   1. + the request's headers and the client address (req.headers, clientIp through a trusted proxy);
//   2. + device, OS, browser and bot (the enricher's user-agent results kept per string) and the language;
//   3. + country and network operator (the IP databases);
//   4. + the visitor hash (HMAC-SHA-256 of address and user agent);
//   5. + the scan's id and its row into the scan buffer (fastUlid, encodeScanRow, ScanBuffer: the row
//      written into the open batch's bytes, a batch every 3 s, sent to an insert that keeps nothing);
//   6. + the journal: the rows of one round of I/O written to the batch's file before their answers
//      (FileJournal in a JournalGroup, the redirect's own).
// Every step is measured with the same realistic mix as `make bench-redirect` (1,000 codes, real
// browser and bot user agents, 10,000 X-Forwarded-For addresses, 20 languages) through wrk -t1 -c50,
// BENCH_ROUNDS rounds (default 10) of BENCH_DURATION seconds (default 2) per step, the steps taking
// turns within each round so that the machine's drift falls on all of them. Prints each step's
// median req/s and CPU per request (the server process, every thread), and what the step added: the
// median over the rounds of its CPU less the step before it in the same round.
// Operations within a loop cost a fraction of what they cost here: the server's own work (parsing,
// sockets, the kernel) keeps evicting their data from the caches. No goal: it says where to look.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { NO_GS1, REDIRECT_SCAN_COLUMNS } from '../../server/analytics/scan-event.js';
import { loadGeoData } from '../../server/geo/database.js';
import { clientIp, trustList } from '../../server/http-common/client-ip.js';
import { fastUlid } from '../../server/ids.js';
import { createEnricher, referrerHost } from '../../server/redirect/enrich.js';
import { createLogger } from '../../server/logger.js';
import { ScanBuffer } from '../../server/redirect/scan-buffer.js';
import { FileJournal, JournalGroup } from '../../server/redirect/scan-ipc.js';
import { encodeScanRow, utcStamp, type ScanRow } from '../../server/redirect/scan-rows.js';
import { cpuSeconds, machine, startChild, stopChild } from './lib.js';
import { mixSlug, writeTrafficMix } from './traffic-mix.js';
import { ensureWrk, runWrk } from './wrk.js';

const STEPS = [
  'a bare 302, answers after the round of I/O',
  '+ headers and client address',
  '+ user agent and language',
  '+ country and network',
  '+ visitor hash',
  '+ scan id and row, into the scan buffer',
  '+ the journal (one write a round)',
];

/** The server of one step: answers `LISTENING <port>` on stdout once it listens. */
async function serve(step: number, dir: string): Promise<void> {
  const enricher = createEnricher(await loadGeoData(), Buffer.alloc(32, 7));
  const trust = trustList(['127.0.0.1']);
  const log = createLogger('warn');
  // Steps 0-5 answer after the round of I/O as the journal group does, with no journal in it.
  const group = new JournalGroup(log);
  const scans = new ScanBuffer<ScanRow>({
    // No ClickHouse: `insert` takes every batch and keeps nothing (the client is for the default insert).
    client: null as never,
    table: 'bench.scan_events',
    columns: REDIRECT_SCAN_COLUMNS,
    encode: encodeScanRow,
    spillDir: dir,
    log,
    flushMs: 3000,
    maxRows: 50_000,
    insert: async () => {},
    journal: step >= 6 ? new FileJournal(dir, 'scan_events', log, group) : undefined,
  });
  scans.start();
  const answer = (res: http.ServerResponse) => () => {
    res.writeHead(302, {
      Location: 'https://example.com/landing?from=qr',
      'Cache-Control': 'private, max-age=0',
      'Content-Length': 0,
    });
    res.end();
  };
  const server = http.createServer((req, res) => {
    if (step >= 1) {
      const h = req.headers;
      const ua = h['user-agent'] ?? '';
      const ip = clientIp(req.socket.remoteAddress, h['x-forwarded-for'], trust);
      const agent = step >= 2 ? enricher.agent(ua) : null;
      const language = step >= 2 ? enricher.language(h['accept-language']) : '';
      const network = step >= 3 ? enricher.network(ip) : null;
      const visitorHash = step >= 4 ? enricher.visitorHash(ip, ua) : '0';
      if (step >= 5 && agent && network) {
        const ms = Date.now();
        scans.push({
          scan_id: fastUlid(ms),
          scanned_at: utcStamp(ms),
          org_id: 1,
          brand_id: 0,
          domain_id: 0,
          code_id: 1,
          visitor_hash: visitorHash,
          country: network.country,
          device_type: agent.device,
          os: agent.os,
          browser: agent.browser,
          referrer: referrerHost(h.referer),
          language,
          provider: network.provider,
          asn: network.asn,
          is_bot: agent.isBot ? 1 : 0,
          matched_rule: -1,
          // Field by field, as the handler's pushScan writes them (a spread per request would cost more).
          gtin: NO_GS1.gtin,
          cpv: NO_GS1.cpv,
          lot: NO_GS1.lot,
          serial: NO_GS1.serial,
          link_type_asked: NO_GS1.link_type_asked,
          link_type_served: NO_GS1.link_type_served,
        });
      }
    }
    group.after(answer(res));
  });
  server.keepAliveTimeout = 5000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`LISTENING ${(server.address() as { port: number }).port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => void scans.close().then(() => process.exit(0))));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  ensureWrk();
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 10));
  const seconds = Math.max(2, Number(process.env.BENCH_DURATION ?? 2));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-steps-'));
  try {
    const mixFile = path.join(dir, 'traffic-mix.tsv');
    await writeTrafficMix(
      mixFile,
      Array.from({ length: 1000 }, (_, i) => `/bench/${mixSlug(i)}`),
    );
    console.log(`redirect steps  machine: ${machine()}  load average: ${os.loadavg()[0].toFixed(1)}`);
    console.log(`wrk -t1 -c50, the redirect benchmark's mix, ${rounds} rounds of ${seconds} s per step\n`);
    const rps: number[][] = STEPS.map(() => []);
    const cpuUs: number[][] = STEPS.map(() => []);
    const servers = await Promise.all(
      STEPS.map((_, step) =>
        startChild(
          process.execPath,
          ['--import', 'tsx', new URL(import.meta.url).pathname, 'serve', String(step), path.join(dir, `step-${step}`)],
          {},
        ),
      ),
    );
    try {
      for (const { port } of servers)
        await runWrk('warm-up', `http://127.0.0.1:${port}/`, { connections: 50, seconds: 2, mixFile });
      for (let round = 0; round < rounds; round++) {
        for (let step = 0; step < STEPS.length; step++) {
          const { child, port } = servers[step];
          const before = await cpuSeconds(child.pid!);
          const w = await runWrk(STEPS[step], `http://127.0.0.1:${port}/`, { connections: 50, seconds, mixFile });
          const cpu = (await cpuSeconds(child.pid!)) - before;
          if (w.statusErrors || w.socketErrors)
            throw new Error(`step ${step}: ${w.statusErrors + w.socketErrors} errors`);
          rps[step].push(w.rps);
          cpuUs[step].push((cpu * 1e6) / Math.max(1, w.requests));
        }
      }
    } finally {
      await Promise.all(servers.map((s) => stopChild(s.child)));
    }
    console.log('step                                          req/s  CPU µs/request  added');
    console.log('--------------------------------------------  -----  --------------  -----');
    STEPS.forEach((label, step) => {
      const us = median(cpuUs[step]);
      // What the step added: the median over the rounds of its CPU less the step before it in the same round.
      const delta = step === 0 ? 0 : median(cpuUs[step].map((x, round) => x - cpuUs[step - 1][round]));
      const added = step === 0 ? '' : `${delta >= 0 ? '+' : ''}${delta.toFixed(1)}`;
      console.log(
        `${`${step}. ${label}`.padEnd(44)}  ${String(Math.round(median(rps[step]))).padStart(5)}  ${us.toFixed(1).padStart(14)}  ${added}`,
      );
    });
    console.log(
      `\nper round, CPU µs/request: ${cpuUs.map((xs, i) => `${i}: ${xs.map((x) => x.toFixed(1)).join(' / ')}`).join('; ')}`,
    );
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve') await serve(Number(process.argv[3]), process.argv[4]);
else await main();
