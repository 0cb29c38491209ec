// ClickHouse: a server or cluster from CLICKHOUSE_URL, or embedded chDB under DATA_DIR/clickhouse.
// Both go through @clickhouse/client, so there is one client API and one SQL dialect.
import fs from 'node:fs/promises';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';

export type { ClickHouseClient };

export interface ClickHouseHandle {
  client: ClickHouseClient;
  database: string;
  cluster: string | null;
  embedded: boolean;
  close(): Promise<void>;
}

export class ChdbBusyError extends Error {}

/** chDB binds a data directory to one process; a lock file tells other processes it is taken. */
async function lockChdbDir(dir: string): Promise<() => Promise<void>> {
  const lock = path.join(dir, 'owner.pid');
  await fs.mkdir(dir, { recursive: true });
  try {
    const pid = Number((await fs.readFile(lock, 'utf8')).trim());
    if (pid && pid !== process.pid) {
      try {
        process.kill(pid, 0);
        throw new ChdbBusyError(
          `embedded ClickHouse in ${dir} is held by process ${pid}; stop that process, ` +
            'or point CLICKHOUSE_URL at a ClickHouse server to run several processes',
        );
      } catch (err) {
        if (err instanceof ChdbBusyError) throw err;
        // ESRCH: the owner is gone; take the directory over.
      }
    }
  } catch (err) {
    if (err instanceof ChdbBusyError) throw err;
  }
  await fs.writeFile(lock, String(process.pid));
  return async () => {
    await fs.rm(lock, { force: true });
  };
}

export async function openClickHouse(cfg: {
  clickhouseUrl: string | null;
  clickhouseDatabase: string;
  clickhouseCluster: string | null;
  dataDir: string;
}): Promise<ClickHouseHandle> {
  const database = cfg.clickhouseDatabase;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database))
    throw new Error(`CLICKHOUSE_DATABASE "${database}" is not a plain identifier`);
  if (cfg.clickhouseUrl) {
    const client = createClient({ url: cfg.clickhouseUrl, request_timeout: 30_000 });
    return { client, database, cluster: cfg.clickhouseCluster, embedded: false, close: () => client.close() };
  }
  const dir = path.join(cfg.dataDir, 'clickhouse');
  const unlock = await lockChdbDir(dir);
  const { createChdbConnection } = await import('chdb/connection');
  const client = createClient({ connection: createChdbConnection({ path: dir }) } as Parameters<
    typeof createClient
  >[0]);
  return {
    client,
    database,
    cluster: null,
    embedded: true,
    close: async () => {
      await client.close();
      await unlock();
    },
  };
}
