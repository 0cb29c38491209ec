// make bench-api: GET /v1/status (auth + rate limit + last_used) and GET /v1/organization (auth +
// rate limit + metering) at 50 connections against the service, and the same path on a bare Koa
// route, in one run. Prints req/s, p50, p99 and the latency our pipeline adds.
//   BENCH_DURATION=10 BENCH_CONNECTIONS=50 make bench-api
import { load, machine, rssMiB, startBenchService, startChild, stopChild, table } from './lib.js';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

const bench = await startBenchService('qr-bench-api-');
const { service, headers } = bench;
const statusBody = await (await fetch(`http://127.0.0.1:${service.port}/v1/status`, { headers })).text();
const baseline = await startChild(process.execPath, ['--import', 'tsx', 'test/bench/koa-baseline.ts'], {
  BASELINE_BODY: statusBody,
});

try {
  const rssIdle = await rssMiB(bench.service.child.pid!);
  // Warm up both (JIT, pools, caches) on every path measured, then measure.
  await load('warmup', `http://127.0.0.1:${baseline.port}/v1/status`, { connections, duration: 3 });
  for (const p of ['/v1/status', '/v1/organization']) {
    await load('warmup', `http://127.0.0.1:${service.port}${p}`, { connections, duration: 3, headers });
  }
  const bare = await load('bare Koa route', `http://127.0.0.1:${baseline.port}/v1/status`, { connections, duration });
  const orgRead = await load('GET /v1/organization', `http://127.0.0.1:${service.port}/v1/organization`, {
    connections,
    duration,
    headers,
  });
  const status = await load('GET /v1/status', `http://127.0.0.1:${service.port}/v1/status`, {
    connections,
    duration,
    headers,
  });
  process.stdout.write(
    `\nbench-api  machine: ${machine()}  connections: ${connections}  duration: ${duration}s each\n\n`,
  );
  process.stdout.write(table([bare, orgRead, status]) + '\n\n');
  for (const r of [orgRead, status]) {
    process.stdout.write(
      `${r.label}: adds ${(r.p50 - bare.p50).toFixed(2)} ms at p50 and ${(r.p99 - bare.p99).toFixed(2)} ms at p99 over the bare route; ` +
        `${((r.rps / bare.rps) * 100).toFixed(1)}% of its throughput` +
        `${r === orgRead ? ' (goal >= 70%: authenticated, metered, rate-limited)' : ''}\n`,
    );
  }
  process.stdout.write(
    `service RSS (MiB): idle ${rssIdle}, after the runs ${await rssMiB(bench.service.child.pid!)}\n`,
  );
  // One connection: the latency each request pays, without two cores saturated by the load
  // generator, Node and Postgres at once.
  const single = [
    await load('bare Koa route, 1 connection', `http://127.0.0.1:${baseline.port}/v1/status`, {
      connections: 1,
      duration: Math.max(3, Math.round(duration / 2)),
    }),
    await load('GET /v1/organization, 1 connection', `http://127.0.0.1:${service.port}/v1/organization`, {
      connections: 1,
      duration: Math.max(3, Math.round(duration / 2)),
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
    `admission: ${calls} calls in ${batches} round trips (${(calls / batches).toFixed(1)} per batch); ` +
      `principal cache: ${hits} hits, ${misses} misses\n`,
  );
  if (status.non2xx || orgRead.non2xx) process.stdout.write('WARNING: non-2xx answers during the run\n');
} finally {
  await stopChild(baseline.child);
  await bench.stop();
}
