// The load generator of the redirect benchmarks: Debian's `wrk` (a C program, one thread here), so
// the client is not what limits the figures. Installed with apt-get when missing (root only, as the
// browser tests install Chromium). Its Lua hooks (wrk-report.lua) print one JSON line with the
// figures, and can give each request a random path.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Figures } from './lib.js';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'wrk-report.lua');

/** The wrk binary, installed from Debian's archive when missing. */
export function ensureWrk(): string {
  const find = () =>
    (process.env.PATH ?? '/usr/bin:/bin')
      .split(':')
      .concat('/usr/bin')
      .map((dir) => path.join(dir, 'wrk'))
      .find((file) => {
        try {
          fs.accessSync(file, fs.constants.X_OK);
          return true;
        } catch {
          return false;
        }
      });
  const found = find();
  if (found) return found;
  if (process.getuid?.() !== 0)
    throw new Error('wrk is not installed and this process is not root: run `apt-get install -y wrk`.');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env, timeout: 600_000 });
  execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-qq', 'wrk'], {
    stdio: 'ignore',
    env,
    timeout: 600_000,
  });
  const installed = find();
  if (!installed) throw new Error('apt-get installed wrk, but no wrk binary is on PATH');
  return installed;
}

export interface WrkOptions {
  connections: number;
  seconds: number;
  threads?: number;
  headers?: Record<string, string>;
  /** Each request gets `<prefix><random>` as its path (random unknown slugs). */
  randomPathPrefix?: string;
  /** A traffic mix file (traffic-mix.ts): its requests are sent in turn instead of `url`'s path. */
  mixFile?: string;
  /** Answers outside 2xx/3xx are expected (a flood of 404s): not reported as unexpected. */
  expectErrors?: boolean;
}

export interface WrkFigures extends Figures {
  /** How long wrk ran, as it measured it. */
  seconds: number;
  /** Answers outside 2xx/3xx, and socket errors (connect, read, write, timeout). */
  statusErrors: number;
  socketErrors: number;
}

/**
 * One row from wrk runs measured interleaved with another row's (slices): requests over seconds, the
 * median p50, the worst p99, errors summed.
 */
export function mergeSlices(label: string, slices: readonly WrkFigures[]): WrkFigures {
  const total = (f: (r: WrkFigures) => number) => slices.reduce((n, r) => n + f(r), 0);
  const requests = total((r) => r.requests);
  const seconds = total((r) => r.seconds);
  const p50s = slices.map((r) => r.p50).sort((a, b) => a - b);
  return {
    label,
    rps: Math.round(requests / seconds),
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...slices.map((r) => r.p99)),
    non2xx: total((r) => r.non2xx),
    requests,
    seconds,
    statusErrors: total((r) => r.statusErrors),
    socketErrors: total((r) => r.socketErrors),
  };
}

/** One wrk run against `url`; the figures come from the report script's JSON line. */
export function runWrk(label: string, url: string, opts: WrkOptions): Promise<WrkFigures> {
  const args = [
    `-t${opts.threads ?? 1}`,
    `-c${opts.connections}`,
    `-d${opts.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    SCRIPT,
  ];
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const env = { ...process.env, WRK_RANDOM_PREFIX: opts.randomPathPrefix ?? '', WRK_MIX: opts.mixFile ?? '' };
  return new Promise((resolve, reject) => {
    execFile(ensureWrk(), args, { env, timeout: (opts.seconds + 60) * 1000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`wrk failed: ${err.message}\n${stderr}`));
      const line = /^WRK (\{.*\})$/m.exec(stdout);
      if (!line) return reject(new Error(`wrk printed no report:\n${stdout}\n${stderr}`));
      const r = JSON.parse(line[1]) as {
        requests: number;
        duration_us: number;
        p50_us: number;
        p99_us: number;
        status: number;
        connect: number;
        read: number;
        write: number;
        timeout: number;
      };
      const statusErrors = r.status;
      resolve({
        label,
        rps: Math.round(r.requests / (r.duration_us / 1e6)),
        p50: r.p50_us / 1000,
        p99: r.p99_us / 1000,
        non2xx: opts.expectErrors ? r.requests - statusErrors : statusErrors,
        requests: r.requests,
        seconds: r.duration_us / 1e6,
        statusErrors,
        socketErrors: r.connect + r.read + r.write + r.timeout,
      });
    });
  });
}
