// Shared pieces of the benchmarks: child processes that print their port, and autocannon runs.
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import autocannon from 'autocannon';

export interface Figures {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  requests: number;
}

export function machine(): string {
  return `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`;
}

/** Starts a child that prints `LISTENING <port>` (or a line matching `ready`), and returns its port. */
export function startChild(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp = /LISTENING (\d+)/,
): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = ready.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
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
