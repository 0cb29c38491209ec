// make bench-render, last part: do renders stall the redirect? The service as `make start` runs it
// (server/main.ts: API and redirect in one process, REDIRECT_PROCESSES=1, render threads as
// configured), in one run:
//   1. wrk on the redirect alone (the baseline);
//   2. the same wrk while BENCH_RENDER_CLIENTS clients (default 8) each fetch heavy images in a loop
//      through the API: PNGs 2048 px of a style whose SVG logo takes seconds to draw (stored as an old
//      style would be, before logos were measured; saving it now is 422), every one a new image;
//   3. identical second requests: ten images drawn once, then asked for again (served by the cache).
// Goals: redirect p99 <= 100 ms while the heavy renders run; an identical second request <= 25% of
// the first (median of the ten). Exits non-zero when one is missed.
//   BENCH_DURATION=10 BENCH_RENDER_CLIENTS=8 node --import tsx test/bench/render-stall.ts
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import knex from 'knex';
import { ulid } from 'ulid';
import { createLogger } from '../../server/logger.js';
import { freePort, startEmbeddedPostgres } from '../../server/stores/postgres.js';
import { costlySvgLogo } from '../helpers/sample-logo.js';
import { benchOrgToken, exitIfGoalsMissed, machine, startChild, stopChild, table } from './lib.js';
import { ensureWrk, runWrk } from './wrk.js';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const clients = Number(process.env.BENCH_RENDER_CLIENTS ?? 8);
const connections = 50;
const headers = { 'User-Agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)', Host: 'localhost:3001' };

ensureWrk();
const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-render-stall-'));
await fs.chmod(root, 0o755);
const pg = await startEmbeddedPostgres({ dataDir: root, port: 0, database: 'qr', log: createLogger('silent') });
const [apiPort, redirectPort] = [await freePort(), await freePort()];
const env: Record<string, string> = {
  DATABASE_URL: pg.url,
  DATA_DIR: path.join(root, 'svc'),
  API_PORT: String(apiPort),
  REDIRECT_PORT: String(redirectPort),
  FALLBACK_ORIGINS: 'http://localhost:3001',
  ENABLE_WORKER: 'false',
  LOG_LEVEL: 'warn',
  PLATFORM_RATE_LIMIT_PER_MIN: '100000000',
};
const token = benchOrgToken(env);
const service = await startChild(
  process.execPath,
  ['--import', 'tsx', 'server/main.ts'],
  { ...env, QR_PRINT_BANNER: '1' },
  /API: +http:\/\/127\.0\.0\.1:(\d+)/,
);
const db = knex({ client: 'pg', connection: pg.url });
const base = `http://127.0.0.1:${apiPort}`;
const auth = { Authorization: `Bearer ${token}` };

async function api<T>(p: string, body?: object): Promise<T> {
  const res = await fetch(`${base}${p}`, {
    method: body ? 'POST' : 'GET',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

/** One image request: its status and milliseconds. */
async function image(p: string): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const res = await fetch(`${base}${p}`, { headers: auth });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t };
}

/** The goals missed: the process then exits non-zero. */
const missed: string[] = [];
try {
  while ((await fetch(`${base}/readyz`).catch(() => null))?.status !== 200)
    await new Promise((r) => setTimeout(r, 100));
  const [domain] = await api<{ ulid: string }[]>('/v1/domains');
  const code = (slug: string) =>
    api<{ ulid: string }>('/v1/qr-codes', {
      slug,
      destination: 'https://example.com/landing',
      domain_ulid: domain.ulid,
    });
  await code('go');
  const art = await code('art');
  const style = ulid();
  const org = await db('organizations').where({ slug: 'bench' }).first('id');
  await db('qr_styles').insert({
    ulid: style,
    org_id: org.id,
    name: 'Costly logo',
    config: JSON.stringify({ image: costlySvgLogo(), qrOptions: { errorCorrectionLevel: 'H' } }),
    created_at: new Date(),
    updated_at: new Date(),
  });
  const redirect = `http://127.0.0.1:${redirectPort}/bench/go`;
  await runWrk('warmup', redirect, { connections, seconds: 2, headers });
  await image(`/v1/qr-codes/${art.ulid}/image?format=png&size=256&style_ulid=${style}`); // threads loaded

  const alone = await runWrk('redirect alone', redirect, { connections, seconds: duration, headers });

  // Heavy renders beside the same load: every request a new image (size and margin vary).
  let stop = false;
  let n = 0;
  const answers: Record<number, number> = {};
  const renderMs: number[] = [];
  const loops = Array.from({ length: clients }, async () => {
    while (!stop) {
      const i = n++;
      const r = await image(
        `/v1/qr-codes/${art.ulid}/image?format=png&size=${2048 + i}&margin=${i % 33}&style_ulid=${style}`,
      );
      answers[r.status] = (answers[r.status] ?? 0) + 1;
      if (r.status === 200) renderMs.push(r.ms);
    }
  });
  await new Promise((r) => setTimeout(r, 500)); // the renders are under way
  const beside = await runWrk(`redirect beside ${clients} heavy renders`, redirect, {
    connections,
    seconds: duration,
    headers,
  });
  stop = true;
  await Promise.all(loops);

  // Identical second requests: ten new images, each asked for twice.
  const ratios: number[] = [];
  const pairs: string[] = [];
  for (let i = 0; i < 10; i++) {
    const p = `/v1/qr-codes/${art.ulid}/image?format=png&size=${1024 + i}&style_ulid=${style}`;
    const first = await image(p);
    const second = await image(p);
    if (first.status !== 200 || second.status !== 200) throw new Error(`${p}: ${first.status} ${second.status}`);
    ratios.push(second.ms / first.ms);
    pairs.push(`${first.ms.toFixed(0)}/${second.ms.toFixed(1)}`);
  }
  ratios.sort((a, b) => a - b);
  const ratio = ratios[Math.floor(ratios.length / 2)];
  renderMs.sort((a, b) => a - b);

  process.stdout.write(
    `\nbench-render, renders beside redirects  machine: ${machine()}  load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}  wrk -t1 -c${connections} -d${duration}s\n\n` +
      table([alone, beside]) +
      '\n\n' +
      `heavy image answers during the run: ${Object.entries(answers)
        .map(([s, c]) => `${c} × ${s}`)
        .join(', ')}; 200s took p50 ${renderMs[Math.floor(renderMs.length / 2)]?.toFixed(0) ?? '-'} ms\n` +
      `goal redirect p99 <= 100 ms beside heavy renders: ${beside.p99.toFixed(2)} ms ` +
      `(alone ${alone.p99.toFixed(2)} ms) ${beside.p99 <= 100 ? 'met' : 'NOT met'}\n` +
      `identical second request (first/second ms): ${pairs.join(', ')}\n` +
      `goal second request <= 25% of the first (median): ${(ratio * 100).toFixed(1)}% ${ratio <= 0.25 ? 'met' : 'NOT met'}\n`,
  );
  if (beside.p99 > 100) missed.push('redirect p99 > 100 ms beside heavy renders');
  if (ratio > 0.25) missed.push('second request > 25% of the first');
} finally {
  await db.destroy();
  await stopChild(service.child);
  await pg.stop();
  await fs.rm(root, { recursive: true, force: true });
}
exitIfGoalsMissed(missed);
