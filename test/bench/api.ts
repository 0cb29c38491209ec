// make bench-api: GET /v1/organization (auth + rate limit + metering: billable) and GET /v1/status
// (auth + rate limit + last_used) at 50 connections against the service, the first again through
// Koa rather than the fast reads, and the same body on a bare Koa route, in one run, with Debian's
// wrk (a C load generator, test/bench/wrk.ts) so the client is not the limit. Prints req/s, p50,
// p99, the service's CPU time per request, its RSS, and checks that every 200 the service answered
// to the metered read was counted once in Postgres (once the service has given back its leases'
// unspent calls, docs/api.md, Leases).
//   BENCH_DURATION=10 BENCH_CONNECTIONS=50 make bench-api
//   BENCH_PROFILE=<dir>  also writes a V8 CPU profile of the service (node --cpu-prof) into <dir>
import os from 'node:os';
import pg from 'pg';
import {
  cpuSeconds,
  exitIfGoalsMissed,
  machine,
  rssMiB,
  startBenchService,
  startChild,
  stopChild,
  table,
  type Figures,
} from './lib.js';
import { ensureWrk, runWrk, type WrkOptions } from './wrk.js';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const GOAL = 70;

ensureWrk();
const profileDir = process.env.BENCH_PROFILE;
const bench = await startBenchService(
  'qr-bench-api-',
  profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
);
const { service, headers } = bench;
const pid = service.child.pid!;
const statusBody = await (await fetch(`http://127.0.0.1:${service.port}/v1/status`, { headers })).text();
const baseline = await startChild(process.execPath, ['--import', 'tsx', 'test/bench/koa-baseline.ts'], {
  BASELINE_BODY: statusBody,
});
const db = new pg.Client({ connectionString: bench.env.DATABASE_URL });
await db.connect();

/** Billable calls counted in Postgres this month, all organizations. */
async function billed(): Promise<number> {
  const { rows } = await db.query<{ n: string }>('select coalesce(sum(calls), 0) as n from api_usage_months');
  return Number(rows[0].n);
}

/**
 * Waits until the service has given back every lease's unspent calls (it does within a second or
 * two of its last call), so that the billed count is that of the answered calls.
 */
async function leasesSettled(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await db.query<{ n: string }>('select count(*) as n from api_leases where settled_at is null');
    if (Number(rows[0].n) === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('leases still open 20 s after the load');
}

/** 200 answers the service gave on a route (its own metrics). */
async function answered(route: string): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${service.port}/metrics`)).text();
  let n = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith('http_requests_total{') && line.includes(`route="${route}"`) && line.includes('status="200"'))
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

type Row = Figures & { cpuUs?: number };

async function run(
  label: string,
  url: string,
  opts: Omit<WrkOptions, 'connections' | 'seconds'> & { connections?: number; seconds?: number },
  cpuPid?: number,
): Promise<Row> {
  const cpu0 = cpuPid ? await cpuSeconds(cpuPid) : 0;
  const r = await runWrk(label, url, { connections, seconds: duration, ...opts });
  if (!cpuPid) return r;
  const cpu = (await cpuSeconds(cpuPid)) - cpu0;
  return { ...r, cpuUs: Math.round((cpu * 1e6) / Math.max(1, r.requests)) };
}

/** The goals missed: the process then exits non-zero. */
const missed: string[] = [];
try {
  const rssIdle = await rssMiB(pid);
  const bareUrl = `http://127.0.0.1:${baseline.port}/v1/status`;
  const orgUrl = `http://127.0.0.1:${service.port}/v1/organization`;
  const statusUrl = `http://127.0.0.1:${service.port}/v1/status`;
  // Warm up both (JIT, pools, caches) on every path measured, then measure.
  await run('warmup', bareUrl, { seconds: 3 });
  await run('warmup', orgUrl, { seconds: 3, headers });
  await run('warmup', statusUrl, { seconds: 3, headers });

  const bare = await run('bare Koa route', bareUrl, {}, baseline.child.pid);
  await leasesSettled();
  const billed0 = await billed();
  const answered0 = await answered('/v1/organization');
  const orgRead = await run('GET /v1/organization (metered)', orgUrl, { headers }, pid);
  // wrk stops with requests in flight: wait until the service has answered them all.
  let settled = await answered('/v1/organization');
  for (let last = -1; settled !== last;) {
    last = settled;
    await new Promise((r) => setTimeout(r, 300));
    settled = await answered('/v1/organization');
  }
  await leasesSettled();
  const billedDelta = (await billed()) - billed0;
  const answeredDelta = settled - answered0;
  const status = await run('GET /v1/status', statusUrl, { headers }, pid);
  // The same metered read through Koa: the fast reads (server/http/fast-reads.ts) leave a path with
  // a trailing slash to Koa, whose router matches it to the same operation. (wrk drops a
  // Content-Length header from a request without a body, so that cannot be used to send it there.)
  const viaKoa = await run('GET /v1/organization/ via Koa', `${orgUrl}/`, { headers }, pid);
  const rssAfter = await rssMiB(pid);

  process.stdout.write(
    `\nbench-api  machine: ${machine()}  load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\nwrk -t1 -c${connections} -d${duration}s each\n\n`,
  );
  process.stdout.write(table([bare, orgRead, status, viaKoa]) + '\n');
  process.stdout.write(
    `CPU per request (the serving process, all threads): bare Koa ${bare.cpuUs} µs, ` +
      `GET /v1/organization ${orgRead.cpuUs} µs, GET /v1/status ${status.cpuUs} µs, ` +
      `GET /v1/organization via Koa ${viaKoa.cpuUs} µs\n\n`,
  );
  const ratio = (orgRead.rps / bare.rps) * 100;
  process.stdout.write(
    `GET /v1/organization (authenticated, metered, rate-limited): ${ratio.toFixed(1)}% of the bare Koa route's ` +
      `throughput; goal >= ${GOAL}%: ${ratio >= GOAL ? 'met' : 'NOT met'}\n` +
      `GET /v1/status: ${((status.rps / bare.rps) * 100).toFixed(1)}%\n` +
      `GET /v1/organization via Koa (no fast read): ${((viaKoa.rps / bare.rps) * 100).toFixed(1)}%\n` +
      `metering: ${answeredDelta} answers 200 to GET /v1/organization, ${billedDelta} calls counted: ` +
      `${answeredDelta === billedDelta ? 'exact' : 'MISMATCH'}\n` +
      `service RSS (MiB): idle ${rssIdle}, after the runs ${rssAfter}\n`,
  );
  // One connection: the latency each request pays, without two cores saturated by the load
  // generator, Node and Postgres at once.
  const single = [
    await run('bare Koa route, 1 connection', bareUrl, {
      connections: 1,
      seconds: Math.max(3, Math.round(duration / 2)),
    }),
    await run('GET /v1/organization, 1 connection', orgUrl, {
      connections: 1,
      seconds: Math.max(3, Math.round(duration / 2)),
      headers,
    }),
  ];
  process.stdout.write('\n' + table(single) + '\n');
  process.stdout.write(
    `at 1 connection our pipeline adds ${(single[1].p50 - single[0].p50).toFixed(2)} ms at p50 ` +
      `(mean ${(1000 / single[1].rps - 1000 / single[0].rps).toFixed(2)} ms per request)\n\n`,
  );
  const metrics = await (await fetch(`http://127.0.0.1:${service.port}/metrics`)).text();
  const pick = (re: RegExp) => Number(re.exec(metrics)?.[1] ?? NaN);
  const batches = pick(/^api_admission_batch_size_count (\d+)/m);
  const calls = pick(/^api_admission_batch_size_sum (\d+)/m);
  const hits = pick(/^api_principal_cache_total\{result="hit"\} (\d+)/m);
  const misses = pick(/^api_principal_cache_total\{result="miss"\} (\d+)/m);
  process.stdout.write(
    `admission: ${calls} calls in ${batches} round trips to Postgres (${(calls / batches).toFixed(1)} per batch); ` +
      `principal cache: ${hits} hits, ${misses} misses\n`,
  );
  if (status.non2xx || orgRead.non2xx || viaKoa.non2xx)
    process.stdout.write('WARNING: non-2xx answers during the run\n');
  if (answeredDelta !== billedDelta) missed.push(`${answeredDelta} calls answered, ${billedDelta} billed`);
  if (ratio < GOAL) missed.push(`metered read < ${GOAL}% of bare Koa`);
} finally {
  await db.end();
  await stopChild(baseline.child);
  await bench.stop();
}
exitIfGoalsMissed(missed);
