// The service as `make start` runs it (server/main.ts in its own process) on embedded stores in a
// fresh data directory and on free ports, for the tests that start it whole.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../server/stores/postgres.js';
import { waitFor } from './poll.js';
import { testRoot } from './stores.js';

export interface ServiceProcessEnv {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  apiPort: number;
  redirectPort: number;
}

/** The environment of a service (and of qrctl beside it) on embedded stores under testRoot()/name. */
export async function embeddedServiceEnv(name: string, extra: NodeJS.ProcessEnv = {}): Promise<ServiceProcessEnv> {
  const dataDir = path.join(testRoot(), name);
  const [apiPort, redirectPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    API_PORT: String(apiPort),
    REDIRECT_PORT: String(redirectPort),
    FALLBACK_ORIGINS: `http://localhost:${redirectPort}`,
    ...extra,
  };
  delete env.DATABASE_URL;
  delete env.CLICKHOUSE_URL;
  return { env, dataDir, apiPort, redirectPort };
}

/**
 * `qrctl org create` as a user runs it beside a started service (bin/qrctl.js, the service's
 * environment): organization "Acme" (slug acme, business plan, EUR); its owner token.
 */
export async function createOrgWithQrctl(env: NodeJS.ProcessEnv): Promise<string> {
  const args = ['org', 'create', '--name', 'Acme', '--slug', 'acme', '--plan', 'business_monthly'];
  args.push('--currency', 'EUR', '--owner-email', 'you@example.com', '--json');
  const { stdout } = await promisify(execFile)(path.resolve('bin/qrctl.js'), args, { env });
  return (JSON.parse(stdout) as { token: string }).token;
}

/** Waits for `probe` (the test's own deadline bounds it), failing at once if the service exits. */
export function until(what: string, probe: () => Promise<boolean>, child: ChildProcess): Promise<boolean> {
  return waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) while waiting for ${what}`);
      return probe();
    },
    Boolean,
    280_000,
    50,
  );
}

/** Starts server/main.ts on `env`; its output is collected for failure messages. */
export function startService(env: NodeJS.ProcessEnv) {
  const server = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const state = { server, output: '' };
  server.stdout!.on('data', (c: Buffer) => (state.output += c.toString()));
  server.stderr!.on('data', (c: Buffer) => (state.output += c.toString()));
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  const ready = () =>
    until(
      'readiness',
      async () => (await fetch(`http://127.0.0.1:${env.API_PORT}/readyz`).catch(() => null))?.status === 200,
      server,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${state.output}`);
    });
  return {
    ...state,
    get output() {
      return state.output;
    },
    exited,
    ready,
  };
}
