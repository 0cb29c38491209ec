// make bench-stream: the live scan stream (docs/stream.md) under redirect load. The service as
// `make start` runs it (server/main.ts on embedded chDB, its own embedded Postgres), an enterprise
// organization with 50 codes, and `wrk` driving the redirect with the benchmarks' realistic mix
// (traffic-mix.ts: real browser and bot user agents, languages, client addresses). Two rows,
// measured interleaved in BENCH_ROUNDS rounds (default 3), so that the machine's drift falls on
// both: the redirect alone, and the redirect with 20 subscribers of the organization's stream. A
// round: the redirect alone for a slice; 20 subscribers connect, and while `wrk` drives the redirect
// for a slice a probe sends 10 redirects a second, each with a unique Referer, and every subscriber
// notes when that scan's event arrives (latency from the redirect's answer to the event); then the
// subscribers' events are checked against the scans recorded meanwhile (the codes'
// redirects_count): every one delivered, none twice; the subscribers leave. A last slice alone ends
// the run. A row's req/s is its requests over its seconds in all its slices. BENCH_DURATION (default
// 10): a slice is BENCH_DURATION / BENCH_ROUNDS seconds, whole (3 s by default), so the row with
// subscribers has BENCH_ROUNDS slices and the row alone one more. BENCH_CONNECTIONS (50),
// BENCH_SUBSCRIBERS (20), REDIRECT_PROCESSES (1), BENCH_CPU_PROF (a directory: CPU profiles of the service and of the
// benchmark process during the first slice with subscribers, cpu-profile.ts).
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { CONFIG_KEYS } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { freePort, startEmbeddedPostgres } from '../../server/stores/postgres.js';
import { cpuProfiler } from './cpu-profile.js';
import {
  api,
  benchOrgToken,
  cpuSeconds,
  exitIfGoalsMissed,
  machine,
  startChild,
  stopChild,
  waitedChildrenCpuSeconds,
} from './lib.js';
import { writeTrafficMix, warmMixCodes } from './traffic-mix.js';
import { mergeSlices, runWrk } from './wrk.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 20);
const PROCESSES = process.env.REDIRECT_PROCESSES ?? '1';
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
/** BENCH_CPU_PROF=<dir>: CPU profiles of the service and of this process during the first slice with subscribers. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : '';
const CODES = 50;
const PROBE_PER_SECOND = 10;
/** The end of a probe's Referer host. */
const PROBE = '.probe.example';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Subscriber {
  /** Scan events received. */
  events: number;
  /** Those whose id came after the one before it in stream order (any other is a repeat or out of order). */
  inOrder: number;
  /** Scans the service announced as missed for this subscriber (`gap` events: it read too slowly). */
  missed: number;
  probes: Map<string, number>;
  req: http.ClientRequest;
}

const EVENT_SCAN = Buffer.from('event: scan\n');
const EVENT_GAP = Buffer.from('event: gap\n');
const ID = Buffer.from('id: ');
const DATA = Buffer.from('\ndata: ');
const ULID_LENGTH = 26;

/**
 * A subscriber that reads only what the benchmark needs, so that the 20 of them cost this process
 * (which shares the cores with the service and wrk) as little as possible. It works on the bytes
 * as they arrive (no text decoding of the whole stream): each scan event's id line, `<seq>-<scan_id>`,
 * is checked to come after the one before it in stream order (docs/stream.md: by the batch's seq,
 * then by scan id), so that every scan is counted and a repeated one would show, in constant memory;
 * the data is parsed only of a probe's scan (its Referer) and of a `gap` event. The stream's frames
 * are as docs/stream.md shows them; the tests read the same stream with the `eventsource` package
 * and eventsource-parser.
 */
function subscribe(url: string, token: string): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const sub = { events: 0, inOrder: 0, missed: 0, probes: new Map<string, number>() } as Subscriber;
    let lastSeq = -1;
    const lastId = Buffer.alloc(ULID_LENGTH);
    const dataOf = (buf: Buffer, from: number, to: number) => {
      const at = buf.indexOf(DATA, from);
      return JSON.parse(buf.toString('utf8', at + DATA.length, to)) as { missed: number; referrer: string };
    };
    let rest: Buffer = Buffer.alloc(0);
    const read = (chunk: Buffer) => {
      const buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
      const end = buf.lastIndexOf('\n\n');
      if (end < 0) {
        rest = buf;
        return;
      }
      rest = Buffer.from(buf.subarray(end + 2));
      const now = performance.now();
      // The next probe's Referer in the bytes: looked up once per chunk and moved on, not per event.
      let probe = buf.indexOf(PROBE);
      for (let i = 0; i < end;) {
        let j = buf.indexOf('\n\n', i);
        if (j < 0 || j > end) j = end;
        if (buf.compare(ID, 0, ID.length, i, i + ID.length) === 0) {
          const nl = buf.indexOf(10, i);
          if (buf.compare(EVENT_SCAN, 0, EVENT_SCAN.length, nl + 1, nl + 1 + EVENT_SCAN.length) === 0) {
            let seq = 0;
            let at = i + ID.length;
            for (; buf[at] !== 0x2d; at++) seq = seq * 10 + buf[at] - 0x30;
            const idAt = at + 1;
            sub.events++;
            if (seq > lastSeq || (seq === lastSeq && buf.compare(lastId, 0, ULID_LENGTH, idAt, idAt + ULID_LENGTH) > 0))
              sub.inOrder++;
            lastSeq = seq;
            buf.copy(lastId, 0, idAt, idAt + ULID_LENGTH);
            while (probe >= 0 && probe < nl) probe = buf.indexOf(PROBE, probe + 1);
            if (probe >= 0 && probe < j) sub.probes.set(dataOf(buf, nl, j).referrer, now);
          }
        } else if (buf.compare(EVENT_GAP, 0, EVENT_GAP.length, i, i + EVENT_GAP.length) === 0) {
          sub.missed += dataOf(buf, i, j).missed;
        }
        i = j + 2;
      }
    };
    sub.req = http.get(url, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
      res.on('data', read);
      resolve(sub);
    });
    sub.req.on('error', reject);
  });
}

/**
 * The probe: a redirect every 100 ms until stopped, each named by its Referer (`<name>p<n>` and
 * PROBE); stop() gives each probe's host and the time its answer came.
 */
function startProbe(redirectPort: number, name: string): { stop(): Promise<Map<string, number>> } {
  const answered = new Map<string, number>();
  let probing = true;
  const get = (host: string) =>
    new Promise<void>((resolve) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port: redirectPort,
          path: '/bench/probe',
          headers: { Host: 'localhost:3001', Referer: `https://${host}/`, 'User-Agent': 'Mozilla/5.0 (iPhone)' },
          agent: false,
        },
        (res) => {
          answered.set(host, performance.now());
          res.resume();
          res.on('end', () => resolve());
        },
      );
      req.on('error', () => resolve());
    });
  const running = (async () => {
    for (let n = 0; probing; n++) {
      await get(`${name}p${n}${PROBE}`);
      await sleep(1000 / PROBE_PER_SECOND);
    }
  })();
  return {
    async stop() {
      probing = false;
      await running;
      return answered;
    },
  };
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function main(): Promise<void> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-stream-'));
  await fs.chmod(root, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: root, port: 0, database: 'qr', log: createLogger('silent') });
  const [apiPort, redirectPort] = [await freePort(), await freePort()];
  const env = {
    DATABASE_URL: pg.url,
    DATA_DIR: path.join(root, 'svc'),
    API_PORT: String(apiPort),
    REDIRECT_PORT: String(redirectPort),
    FALLBACK_ORIGINS: 'http://localhost:3001',
    ENABLE_WORKER: 'false',
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '127.0.0.1',
    REDIRECT_PROCESSES: PROCESSES,
    PLATFORM_RATE_LIMIT_PER_MIN: '100000000',
  };
  const token = benchOrgToken(env);
  const service = await startChild(
    process.execPath,
    ['--import', 'tsx', ...(PROFILE_DIR ? ['--import', './test/bench/cpu-profile.ts'] : []), 'server/main.ts'],
    { ...env, QR_PRINT_BANNER: '1', BENCH_CPU_PROF: PROFILE_DIR },
    /API: +http:\/\/127\.0\.0\.1:(\d+)/,
  );
  const subs: Subscriber[] = [];
  try {
    const base = `http://127.0.0.1:${apiPort}`;
    while ((await fetch(`${base}/readyz`).catch(() => null))?.status !== 200) await sleep(100);
    const call = <T>(p: string, body?: object) => api<T>(base, token, p, body);
    const [domain] = await call<{ ulid: string }[]>('/v1/domains');
    for (let i = 0; i < CODES; i++) {
      await call('/v1/qr-codes', {
        slug: `c${i}`,
        destination: `https://example.com/p/${i}`,
        domain_ulid: domain.ulid,
      });
    }
    await call('/v1/qr-codes', { slug: 'probe', destination: 'https://example.com/probe', domain_ulid: domain.ulid });
    const recorded = async () =>
      (await call<{ redirects_count: number }[]>('/v1/qr-codes?limit=1000')).reduce((a, c) => a + c.redirects_count, 0);
    /**
     * Until redirects_count stops moving (every batch stored and counted): unchanged over longer than
     * the redirect's flush interval, so that a batch still open cannot pass for none.
     */
    const settleMs = Math.max(2500, Number(process.env.SCAN_FLUSH_MS ?? CONFIG_KEYS.scanFlushMs.default) + 1000);
    const settled = async () => {
      let last = -1;
      for (;;) {
        const now = await recorded();
        if (now === last) return now;
        last = now;
        await sleep(settleMs);
      }
    };
    const paths = Array.from({ length: CODES }, (_, i) => `/bench/c${i}`);
    const url = `http://127.0.0.1:${redirectPort}/bench/c0`;
    const mixFile = path.join(root, 'mix.tsv');
    await writeTrafficMix(mixFile, paths);
    /**
     * One phase of wrk, with the CPU seconds each party used meanwhile: the service (every thread),
     * this process (the subscribers and the probe) and wrk (a waited-for child: /proc/self/stat's
     * cutime and cstime). All three share the machine's cores.
     */
    const cpuNow = async () => {
      const own = process.cpuUsage();
      return {
        service: await cpuSeconds(service.child.pid!),
        bench: (own.user + own.system) / 1e6,
        wrk: await waitedChildrenCpuSeconds(),
      };
    };
    type Slice = Awaited<ReturnType<typeof runWrk>> & { cpu: { service: number; bench: number; wrk: number } };
    /** One row from its slices, with the CPU seconds of each party summed. */
    const merged = (label: string, slices: Slice[]): Slice => ({
      ...mergeSlices(label, slices),
      cpu: {
        service: slices.reduce((n, r) => n + r.cpu.service, 0),
        bench: slices.reduce((n, r) => n + r.cpu.bench, 0),
        wrk: slices.reduce((n, r) => n + r.cpu.wrk, 0),
      },
    });
    const wrk = async (label: string, seconds: number): Promise<Slice> => {
      const before = await cpuNow();
      const r = await runWrk(label, url, {
        connections: CONNECTIONS,
        seconds,
        headers: { Host: 'localhost:3001' },
        mixFile,
      });
      const after = await cpuNow();
      return {
        ...r,
        cpu: {
          service: after.service - before.service,
          bench: after.bench - before.bench,
          wrk: after.wrk - before.wrk,
        },
      };
    };

    await warmMixCodes(`http://127.0.0.1:${redirectPort}`, 'localhost:3001', paths);
    const slice = Math.max(1, Math.round(DURATION / ROUNDS)); // wrk takes whole seconds
    const alone = [await wrk('redirect, no subscriber', slice)];
    const withSubs: typeof alone = [];
    const latencies: number[] = [];
    let answeredTotal = 0;
    let expected = 0;
    /** Per subscriber (by its place), over every round: scans delivered, announced missed, received twice. */
    const delivered = new Array<number>(SUBSCRIBERS).fill(0);
    const missed = new Array<number>(SUBSCRIBERS).fill(0);
    let doubled = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await settled();
      for (let i = 0; i < SUBSCRIBERS; i++)
        subs.push(await subscribe(`${base}/v1/scans/stream?include_bots=true`, token));
      // Each redirect process looks for open streams every 2 s and then flushes sooner (docs/stream.md).
      await sleep(2500);
      const before = await recorded();
      const probe = startProbe(redirectPort, `r${round}`);
      const profiler = PROFILE_DIR && round === 0 ? cpuProfiler() : null;
      profiler?.start();
      if (profiler) service.child.kill('SIGUSR2');
      withSubs.push(await wrk(`redirect, ${SUBSCRIBERS} subscribers`, slice));
      if (profiler) service.child.kill('SIGUSR2');
      await profiler?.stop(path.join(PROFILE_DIR, 'bench.cpuprofile'));
      const answered = await probe.stop();
      const after = await settled();
      // Every event of the scans stored so far has had time to arrive.
      let stable = -1;
      while (subs.reduce((a, s) => a + s.events, 0) !== stable) {
        stable = subs.reduce((a, s) => a + s.events, 0);
        await sleep(2000);
      }
      expected += after - before;
      answeredTotal += answered.size;
      for (const [n, s] of subs.entries()) {
        delivered[n] += s.inOrder;
        missed[n] += s.missed;
        doubled += s.events - s.inOrder;
        for (const [host, at] of answered) {
          const got = s.probes.get(host);
          if (got !== undefined) latencies.push(got - at);
        }
      }
      for (const s of subs.splice(0)) s.req.destroy();
      // The streams' sessions end with their connections; the flush returns to its interval.
      await sleep(2500);
      alone.push(await wrk('redirect, no subscriber', slice));
    }
    latencies.sort((x, y) => x - y);
    const aloneRow = merged(`redirect, no subscriber (${alone.length} slices)`, alone);
    const withRow = merged(`redirect, ${SUBSCRIBERS} subscribers (${withSubs.length} slices)`, withSubs);
    const rows = [aloneRow, withRow];
    const baseline = aloneRow.rps;
    const [l1, l5, l15] = os.loadavg();
    console.log(
      `\nmake bench-stream: ${machine()}; REDIRECT_PROCESSES=${PROCESSES}, wrk -c${CONNECTIONS}, ` +
        `${ROUNDS} rounds, slices of ${slice} s, interleaved`,
    );
    console.log(
      `load average before the report: ${l1.toFixed(1)} ${l5.toFixed(1)} ${l15.toFixed(1)} (${os.cpus().length} cores)\n`,
    );
    console.log(
      '| phase | req/s | p50 ms | p99 ms | requests | errors | CPU s: service / subscribers and probe / wrk | service CPU per redirect |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const { service: svc, bench, wrk: w } = r.cpu;
      console.log(
        `| ${r.label} | ${r.rps} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.requests} | ${r.statusErrors + r.socketErrors} | ` +
          `${svc.toFixed(1)} / ${bench.toFixed(1)} / ${w.toFixed(1)} | ${Math.round((svc * 1e6) / Math.max(1, r.requests))} µs |`,
      );
    }
    console.log(
      `\nthroughput with ${SUBSCRIBERS} subscribers: ${((withRow.rps / baseline) * 100).toFixed(1)}% of the redirect alone, ` +
        `interleaved (goal ≥ 95%); per round: ${withSubs.map((w, n) => `${((w.rps / ((alone[n].rps + alone[n + 1].rps) / 2)) * 100).toFixed(0)}%`).join(', ')}`,
    );
    console.log(
      `latency redirect answer → event (${latencies.length} probe events over ${SUBSCRIBERS} subscribers): ` +
        `p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p95 ${quantile(latencies, 0.95).toFixed(0)} ms, ` +
        `p99 ${quantile(latencies, 0.99).toFixed(0)} ms (goal p95 ≤ 1000 ms); probes answered ${answeredTotal}`,
    );
    // Every recorded scan is either delivered or announced missed (a gap), none twice.
    const accounted = delivered.every((d, n) => d + missed[n] === expected) && doubled === 0;
    const lossless = accounted && missed.every((m) => m === 0);
    console.log(
      `scans recorded while subscribed (all rounds): ${expected}; delivered per subscriber: ` +
        `${Math.min(...delivered)}..${Math.max(...delivered)}; announced missed (gap events, the subscriber read too slowly): ` +
        `${Math.min(...missed)}..${Math.max(...missed)}; repeated or out of order: ${doubled} → ` +
        (lossless ? 'delivered = recorded' : accounted ? 'delivered + announced missed = recorded' : 'MISMATCH'),
    );
    if (!lossless) goalsMissed.push('not every recorded scan delivered once to every subscriber');
    if (withRow.rps < 0.95 * baseline) goalsMissed.push('with subscribers < 95% of the redirect alone');
    if (quantile(latencies, 0.95) > 1000) goalsMissed.push('latency p95 > 1 s');
  } finally {
    for (const s of subs) s.req.destroy();
    await stopChild(service.child);
    await pg.stop();
    await fs.rm(root, { recursive: true, force: true });
  }
}

/** The goals missed: the process then exits non-zero. */
const goalsMissed: string[] = [];
await main();
exitIfGoalsMissed(goalsMissed);
