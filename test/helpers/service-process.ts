// The service as `make start` runs it (server/main.ts in its own process) on embedded stores in a
// fresh data directory and on free ports, for the tests that start it whole.
import path from 'node:path';
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
