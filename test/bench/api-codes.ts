// make bench-api (after test/bench/api.ts): the QR code list and read paths with 100,000 codes.
// - GET /v1/qr-codes without limit (the whole list, streamed): wall time, bytes, and the server's
//   peak RSS during the request against its RSS before it (read from /proc of the child process).
// - The same list fetched page by page with limit=1000 (the baseline in the same run).
// - GET /v1/qr-codes/{code_ulid} at 50 connections against GET /v1/status (auth + admission only).
//   BENCH_CODES=100000 BENCH_DURATION=10 BENCH_CONNECTIONS=50 make bench-api
import fs from 'node:fs/promises';
import { createKnex } from '../../server/stores/postgres.js';
import { load, machine, startBenchService, table } from './lib.js';

const codes = Number(process.env.BENCH_CODES ?? 100_000);
const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

const bench = await startBenchService('qr-bench-codes-');
const { service, headers, pg } = bench;
const base = `http://127.0.0.1:${service.port}`;
const db = createKnex(pg.url, 2);

/** RSS of the server process (and any children: take the largest in the tree). */
async function serverPids(): Promise<number[]> {
  const out: number[] = [];
  const walk = async (pid: number) => {
    out.push(pid);
    const kids = await fs.readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
    for (const k of kids.split(/\s+/).filter(Boolean)) await walk(Number(k));
  };
  await walk(service.child.pid!);
  return out;
}
async function rssMiB(pids: number[]): Promise<number> {
  let max = 0;
  for (const pid of pids) {
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    if (m) max = Math.max(max, Number(m[1]) / 1024);
  }
  return max;
}

/** Reads a response to the end without keeping it, so the client's memory does not matter. */
async function drain(url: string): Promise<{ ms: number; bytes: number; text?: string }> {
  const start = performance.now();
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return { ms: performance.now() - start, bytes };
}

try {
  const { id: orgId } = await db('organizations').where({ slug: 'bench' }).first('id');
  const { id: domainId } = await db('domains').where({ type: 'fallback' }).orderBy('id').first('id');
  const t0 = performance.now();
  await db.raw(
    `insert into qr_codes (ulid, org_id, domain_id, slug, name, destination, utm_params)
     select '01' || lpad(upper(to_hex(g)), 24, '0'), ?, ?, 'bench/code-' || g, 'Code ' || g,
            to_jsonb('https://example.com/landing/' || g), '{"source":"bench"}'::jsonb
       from generate_series(1, ?) g`,
    [orgId, domainId, codes],
  );
  await db.raw('analyze qr_codes');
  const seedMs = performance.now() - t0;
  const oneUlid = '01' + (codes >> 1).toString(16).toUpperCase().padStart(24, '0');

  const pids = await serverPids();
  // Warm up: JIT and pools.
  await drain(`${base}/v1/qr-codes?limit=1000`);
  await load('warmup', `${base}/v1/qr-codes/${oneUlid}`, { connections, duration: 2, headers });
  const idleRss = await rssMiB(pids);

  let peak = idleRss;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssMiB(pids));
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const full = await drain(`${base}/v1/qr-codes`);
  sampling = false;
  await sampler;

  let pagedMs = 0;
  let pages = 0;
  let cursor: string | null = null;
  do {
    const start = performance.now();
    const res = await fetch(`${base}/v1/qr-codes?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    const body = (await res.json()) as { data: unknown[]; meta: { next_cursor: string | null } };
    pagedMs += performance.now() - start;
    cursor = body.meta.next_cursor;
    pages++;
  } while (cursor);

  const status = await load('GET /v1/status', `${base}/v1/status`, { connections, duration, headers });
  const one = await load('GET /v1/qr-codes/{code_ulid}', `${base}/v1/qr-codes/${oneUlid}`, {
    connections,
    duration,
    headers,
  });

  // The dashboard's code list: a page of 25, newest first, plain and searched (trigram index).
  const q = (extra: string) => `${base}/v1/qr-codes?limit=25&order=newest${extra}`;
  const listPage = await load('page of 25, newest first', q(''), { connections, duration, headers });
  const rare = await load('  search, one match', q('&search=code-77777'), { connections, duration, headers });
  const common = await load('  search, every code matches', q('&search=landing'), { connections, duration, headers });
  const none = await load('  search, no match', q('&search=nowhere'), { connections, duration, headers });

  process.stdout.write(
    `\nbench-api (codes)  machine: ${machine()}  codes: ${codes} (seeded in ${(seedMs / 1000).toFixed(1)} s)\n\n`,
  );
  process.stdout.write(
    `GET /v1/qr-codes (all ${codes}, streamed): ${(full.ms / 1000).toFixed(2)} s, ${(full.bytes / 2 ** 20).toFixed(1)} MiB, ` +
      `${Math.round(codes / (full.ms / 1000))} codes/s\n` +
      `  server RSS: ${idleRss.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB peak during the request (+${(peak - idleRss).toFixed(0)} MiB)\n` +
      `GET /v1/qr-codes?limit=1000 page by page (baseline): ${pages} pages in ${(pagedMs / 1000).toFixed(2)} s\n\n`,
  );
  process.stdout.write(`connections: ${connections}  duration: ${duration}s each\n\n`);
  process.stdout.write(table([status, one, listPage, rare, common, none]) + '\n\n');
  process.stdout.write(
    `GET one code: adds ${(one.p50 - status.p50).toFixed(2)} ms at p50 over GET /v1/status; ${((one.rps / status.rps) * 100).toFixed(1)}% of its throughput\n`,
  );
  if ([status, one, listPage, rare, common, none].some((r) => r.non2xx))
    process.stdout.write('WARNING: non-2xx answers during the run\n');
} finally {
  await db.destroy();
  await bench.stop();
}
