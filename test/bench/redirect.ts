// make bench-redirect: at 50 connections, a bare node:http server answering the same 302, then our
// public redirect with scan recording on (code lookup from the cache, decision, 302, scan into the
// buffer, batches to embedded ClickHouse), then the redirect flooded with random unknown slugs
// (404 page, orphan scans sampled), in one run. Prints req/s, p50, p99 for each, the ratios, the
// Postgres lookups the flood caused, and the scans that reached ClickHouse against the redirects
// served.
//   BENCH_DURATION=10 BENCH_CONNECTIONS=50 make bench-redirect
//   BENCH_PARTS=known,unknown make bench-redirect   # leaves out the bare server's row
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createLogger } from '../../server/logger.js';
import { startEmbeddedPostgres } from '../../server/stores/postgres.js';
import { machine, startChild, stopChild, table, type Figures } from './lib.js';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
// The unknown-slug row is measured against the known code's, so `known` always runs.
const withBare = (process.env.BENCH_PARTS ?? 'bare,known,unknown').split(',').includes('bare');
const headers = {
  Host: 'localhost:3001',
  'User-Agent':
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Accept-Language': 'en-GB,en;q=0.9',
};

/** CPU seconds used so far by a process (all its threads), from /proc. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Runs autocannon; `paths` gives each request its own path (else the URL's), `expect` the answer class. */
async function run(
  label: string,
  url: string,
  seconds: number,
  pid: number,
  opts: { paths?: () => string; expect?: '3xx' | '4xx' } = {},
): Promise<Figures & { redirects: number; cpuUs: number }> {
  const cpu0 = await cpuSeconds(pid);
  const paths = opts.paths;
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    headers,
    ...(paths ? { requests: [{ setupRequest: (req: object) => ({ ...req, path: paths() }) }] } : {}),
  });
  const cpu = (await cpuSeconds(pid)) - cpu0;
  return {
    cpuUs: Math.round((cpu * 1e6) / Math.max(1, r.requests.total)),
    label,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx - r[opts.expect ?? '3xx'], // answers other than the expected class
    requests: r.requests.total,
    redirects: r['3xx'],
  };
}

/**
 * Random slugs no code has, what a flood of guesses sends: a fixed set (derived from a counter, so
 * every run sends the same paths in the same order and meets the same filter false positives),
 * cycled through when the run sends more requests than the set holds.
 */
const UNKNOWN_SLUGS = Array.from(
  { length: 200_000 },
  (_, i) => `/bench/${crypto.createHash('sha256').update(`unknown-${i}`).digest('base64url').slice(0, 12)}`,
);
let nextUnknown = 0;
const randomSlug = (): string => UNKNOWN_SLUGS[nextUnknown++ % UNKNOWN_SLUGS.length];

const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-redirect-'));
await fs.chmod(root, 0o755);
const pg = await startEmbeddedPostgres({ dataDir: root, port: 0, database: 'qr', log: createLogger('silent') });
const env = {
  DATABASE_URL: pg.url,
  DATA_DIR: path.join(root, 'svc'),
  LOG_LEVEL: 'warn',
  FALLBACK_ORIGINS: 'http://localhost:3001',
};
const baseline = await startChild(process.execPath, ['--import', 'tsx', 'test/bench/redirect-baseline.ts'], {});
// node --import tsx rather than the tsx wrapper, so that SIGTERM reaches the service itself.
// BENCH_NODE_ARGS (e.g. --cpu-prof) go to the service's node.
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const service = await startChild(
  process.execPath,
  [...nodeArgs, '--import', 'tsx', 'test/bench/redirect-server.ts'],
  env,
);
let scansLine = '';
let cacheLine = '';
let probeLine = '';
service.child.stdout!.on('data', (chunk: Buffer) => {
  const m = /SCANS .*/.exec(chunk.toString());
  if (m) scansLine = m[0];
  const c = /CACHE .*/.exec(chunk.toString());
  if (c) cacheLine = c[0];
  const p = /PROBE .*/.exec(chunk.toString());
  if (p) probeLine = p[0];
});

try {
  // Warm up both (JIT, caches, pools), then measure.
  if (withBare) await run('warmup', `http://127.0.0.1:${baseline.port}/bench/warm`, 2, baseline.child.pid!);
  await run('warmup', `http://127.0.0.1:${service.port}/bench/warm`, 2, service.child.pid!);
  const bare = withBare
    ? await run('bare node:http 302', `http://127.0.0.1:${baseline.port}/bench/go`, duration, baseline.child.pid!)
    : null;
  if (process.env.BENCH_PROBE === '1') service.child.kill('SIGUSR2'); // measure from here
  const ours = await run('redirect + scan', `http://127.0.0.1:${service.port}/bench/go`, duration, service.child.pid!);
  const unknown = await run(
    'random unknown slugs (404)',
    `http://127.0.0.1:${service.port}/bench/go`,
    duration,
    service.child.pid!,
    { paths: randomSlug, expect: '4xx' },
  );
  const ended = new Promise((r) => service.child.stdout!.once('end', r));
  await stopChild(service.child); // SIGTERM: drain the scan buffer, then report the scans
  await ended;
  const [, count, distinct, served] = /SCANS (\d+) (\d+) (\d+)/.exec(scansLine) ?? [];
  const allOnce = Number(count) === Number(served) && Number(distinct) === Number(served);
  process.stdout.write(
    `\nbench-redirect  machine: ${machine()}  load average: ${os.loadavg()[0].toFixed(1)}  connections: ${connections}  duration: ${duration}s each\n\n`,
  );
  process.stdout.write(table([...(bare ? [bare] : []), ours, unknown]) + '\n\n');
  process.stdout.write(
    `redirect: ${bare ? `${((ours.rps / bare.rps) * 100).toFixed(1)}% of the bare server's throughput (goal >= 50%); ` : ''}` +
      `p99 ${ours.p99.toFixed(2)} ms (goal <= 10 ms)\n` +
      `scans in ClickHouse: ${count ?? '?'} (distinct scan_id ${distinct ?? '?'}) for ${served ?? '?'} redirects served ` +
      `(redirects_count; autocannon completed ${ours.redirects}, the rest were in flight when it stopped)` +
      `${allOnce ? ': every served redirect recorded once' : ': MISMATCH'}\n`,
  );
  process.stdout.write(
    `server CPU per request (all threads): ${bare ? `bare ${bare.cpuUs} µs, ` : ''}redirect + scan ${ours.cpuUs} µs, ` +
      `unknown slugs ${unknown.cpuUs} µs\n`,
  );
  const stat = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(cacheLine)?.[1] ?? NaN);
  process.stdout.write(
    `random unknown slugs: ${((unknown.rps / ours.rps) * 100).toFixed(1)}% of the known code's throughput ` +
      `(goal >= 50%); Postgres lookups over the whole run: ${stat('misses')} for ${unknown.requests} unknown ` +
      `slugs (${stat('filtered')} answered by the known-keys filter); orphan rows written ${stat('orphans')}, ` +
      `dropped by the per-domain sampling ${stat('dropped')}\n`,
  );
  if (probeLine) process.stdout.write(probeLine + '\n');
  if (bare?.non2xx || ours.non2xx) process.stdout.write('WARNING: answers other than 302 during the run\n');
  if (unknown.non2xx) process.stdout.write('WARNING: answers other than 404 during the unknown-slug run\n');
} finally {
  await stopChild(baseline.child);
  await stopChild(service.child);
  await pg.stop();
  await fs.rm(root, { recursive: true, force: true });
}
