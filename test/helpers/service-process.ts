// The service as `make start` runs it (server/main.ts in its own process) on embedded stores in a
// fresh data directory and on free ports, for the tests that start it whole.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../server/stores/postgres.js';
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
