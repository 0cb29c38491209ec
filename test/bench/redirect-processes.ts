// The multi-core rows of `make bench-redirect`: the service as `make start` runs it
// (server/main.ts, embedded chDB, its own database on the bench's Postgres) with REDIRECT_PROCESSES
// = 1, 2, ... in turn, each loaded with the same wrk run of the realistic mix (traffic-mix.ts) on its
// codes made through the API; after each run the service stops (its redirect processes drain to the
// primary) and the codes' scans in chDB are counted against the redirects served (scan-count.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ulid } from 'ulid';
import { createKnex, ensureDatabase, freePort } from '../../server/stores/postgres.js';
import { benchOrgToken, startChild, stopChild } from './lib.js';
import { mixSlug, warmMixCodes } from './traffic-mix.js';
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
  /** The traffic mix file and the number of codes it requests (bench/m0000 ...). */
  mixFile: string;
  mixCodes: number;
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

async function api<T>(base: string, token: string, p: string, body?: object): Promise<T> {
  const res = await fetch(`${base}${p}`, {
    method: body ? 'POST' : 'GET',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
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
    TRUST_PROXY: '127.0.0.1',
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
    // The first code through the API; the mix's other codes written beside it in Postgres (the
    // plan's 300 calls a minute would take minutes), which the service's cache learns of by NOTIFY
    // as it does of any code.
    const first = await code(mixSlug(0));
    const db = createKnex(dbUrl.toString(), 1);
    try {
      const row = await db('qr_codes').where({ ulid: first.ulid }).first('org_id', 'domain_id', 'destination', 'slug');
      const slugPrefix = `${String(row.slug).split('/')[0]}/`;
      for (let i = 1; i < o.mixCodes; i += 500) {
        await db('qr_codes').insert(
          Array.from({ length: Math.min(500, o.mixCodes - i) }, (_, j) => ({
            ulid: ulid(),
            org_id: row.org_id,
            domain_id: row.domain_id,
            slug: slugPrefix + mixSlug(i + j),
            destination: JSON.stringify(row.destination),
          })),
        );
      }
    } finally {
      await db.destroy();
    }
    const url = `http://127.0.0.1:${redirectPort}/bench/${mixSlug(0)}`;
    const wrk = { connections: o.connections, headers: o.headers, mixFile: o.mixFile };
    await warmMixCodes(
      `http://127.0.0.1:${redirectPort}`,
      o.headers.Host,
      Array.from({ length: o.mixCodes }, (_, i) => `/bench/${mixSlug(i)}`),
    );
    await runWrk('warmup', url, { ...wrk, seconds: 2 });
    const pid = service.child.pid!;
    const cpu0 = await treeCpuSeconds(pid);
    const r = await runWrk(`REDIRECT_PROCESSES=${processes}, mix`, url, { ...wrk, seconds: o.duration });
    const cpu = (await treeCpuSeconds(pid)) - cpu0;
    await stopChild(service.child);
    const line = execFileSync(process.execPath, ['--import', 'tsx', 'test/bench/scan-count.ts', 'bench/m%'], {
      env: { ...process.env, ...env },
    }).toString();
    const [, scans, distinct, served] = (/SCANS (\d+) (\d+) (\d+)/.exec(line) ?? []).map(Number);
    return { ...r, processes, cpuUs: Math.round((cpu * 1e6) / Math.max(1, r.requests)), scans, distinct, served };
  } finally {
    await stopChild(service.child);
  }
}
