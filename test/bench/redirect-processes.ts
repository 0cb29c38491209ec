// The multi-core rows of `make bench-redirect`: the service as `make start` runs it
// (server/main.ts, embedded chDB, its own database on the bench's Postgres) with REDIRECT_PROCESSES
// = 1, 2, ... in turn, each loaded with the same wrk run on a code made through the API; after each
// run the service stops (its redirect processes drain to the primary) and the code's scans in chDB
// are counted against the redirects served (scan-count.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ensureDatabase, freePort } from '../../server/stores/postgres.js';
import { api, benchOrgToken, startChild, stopChild } from './lib.js';
import { runWrk, type WrkFigures } from './wrk.js';

export interface ProcessesRow extends WrkFigures {
  processes: number;
  /** CPU time of the service's processes (primary and redirect processes) per request, µs. */
  cpuUs: number;
  scans: number;
  distinct: number;
  served: number;
}

export interface ProcessesOptions {
  /** The bench's Postgres (any database on it): each run gets a database of its own. */
  pgUrl: string;
  root: string;
  duration: number;
  connections: number;
  headers: Record<string, string>;
}

async function treeCpuSeconds(pid: number): Promise<number> {
  const children = (await fs.readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => ''))
    .split(' ')
    .filter(Boolean)
    .map(Number);
  let total = 0;
  for (const p of [pid, ...children]) {
    const stat = await fs.readFile(`/proc/${p}/stat`, 'utf8').catch(() => null);
    if (!stat) continue;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total += (Number(f[11]) + Number(f[12])) / 100;
  }
  return total;
}

/** One service with `processes` redirect processes: warm-up, the measured run, stop, count. */
export async function measureProcesses(processes: number, o: ProcessesOptions): Promise<ProcessesRow> {
  const database = `qr_procs_${processes}`;
  const admin = new URL(o.pgUrl);
  admin.pathname = '/postgres';
  await ensureDatabase(admin.toString(), database);
  const dbUrl = new URL(o.pgUrl);
  dbUrl.pathname = `/${database}`;
  const [apiPort, redirectPort] = [await freePort(), await freePort()];
  const env: Record<string, string> = {
    DATABASE_URL: dbUrl.toString(),
    DATA_DIR: path.join(o.root, `procs-${processes}`),
    API_PORT: String(apiPort),
    REDIRECT_PORT: String(redirectPort),
    FALLBACK_ORIGINS: 'http://localhost:3001',
    ENABLE_WORKER: 'false',
    LOG_LEVEL: 'warn',
    REDIRECT_PROCESSES: String(processes),
  };
  const service = await startChild(
    process.execPath,
    ['--import', 'tsx', 'server/main.ts'],
    { ...env, QR_PRINT_BANNER: '1' },
    /API: +http:\/\/127\.0\.0\.1:(\d+)/,
  );
  try {
    const base = `http://127.0.0.1:${apiPort}`;
    // Every redirect process accepts before the load starts.
    while ((await fetch(`${base}/readyz`).catch(() => null))?.status !== 200)
      await new Promise((r) => setTimeout(r, 100));
    const org = { token: benchOrgToken(env) };
    const [domain] = await api<{ ulid: string }[]>(base, org.token, '/v1/domains');
    const code = async (slug: string) =>
      api<{ ulid: string }>(base, org.token, '/v1/qr-codes', {
        slug,
        destination: 'https://example.com/landing?from=qr',
        domain_ulid: domain.ulid,
      });
    await code('warm');
    const go = await code('go');
    const url = (slug: string) => `http://127.0.0.1:${redirectPort}/bench/${slug}`;
    await runWrk('warmup', url('warm'), { connections: o.connections, seconds: 2, headers: o.headers });
    const pid = service.child.pid!;
    const cpu0 = await treeCpuSeconds(pid);
    const r = await runWrk(`REDIRECT_PROCESSES=${processes}`, url('go'), {
      connections: o.connections,
      seconds: o.duration,
      headers: o.headers,
    });
    const cpu = (await treeCpuSeconds(pid)) - cpu0;
    await stopChild(service.child);
    const line = execFileSync(process.execPath, ['--import', 'tsx', 'test/bench/scan-count.ts', go.ulid], {
      env: { ...process.env, ...env },
    }).toString();
    const [, scans, distinct, served] = (/SCANS (\d+) (\d+) (\d+)/.exec(line) ?? []).map(Number);
    return { ...r, processes, cpuUs: Math.round((cpu * 1e6) / Math.max(1, r.requests)), scans, distinct, served };
  } finally {
    await stopChild(service.child);
  }
}
