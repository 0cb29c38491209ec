// ClickHouse: a server or cluster from CLICKHOUSE_URL, or embedded chDB under DATA_DIR/clickhouse.
// Both go through @clickhouse/client, so there is one client API and one SQL dialect.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
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

export interface TextInsert {
  /** Qualified table name, e.g. `qr.scan_events`. */
  table: string;
  columns?: readonly string[];
  format: 'TabSeparated' | 'JSONEachRow';
  /** The rows, already in `format`. */
  body: string;
  /** Deduplicates a retried batch: a second insert with the same token is a no-op. */
  dedupToken?: string;
}

function settingValue(v: string): string {
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The settings of every insert (an explicit empty token when none is given, so none is inherited). */
function insertSettings(dedupToken: string | undefined): string {
  return `async_insert = 0, insert_deduplicate = 1, insert_deduplication_token = ${settingValue(dedupToken ?? '')}`;
}

/**
 * The one way rows are inserted. Settings ride in the INSERT statement, never in
 * `clickhouse_settings`: chDB's connection turns those into session-wide SET statements that stay
 * in force for every later query of the process, so a deduplication token would make the next
 * unrelated insert pass for a retry and be dropped. test/unit/clickhouse-settings.test.ts keeps
 * `clickhouse_settings` out of the code base.
 */
export async function insertText(client: ClickHouseClient, ins: TextInsert): Promise<void> {
  const columns = ins.columns ? ` (${ins.columns.join(', ')})` : '';
  const settings = insertSettings(ins.dedupToken);
  const result = await client.exec({
    query: `INSERT INTO ${ins.table}${columns} SETTINGS ${settings} FORMAT ${ins.format}`,
    values: Readable.from([ins.body]),
  });
  await new Promise<void>((resolve, reject) => {
    result.stream.on('end', resolve).on('error', reject).resume();
  });
}

export interface SelectInsert {
  /** Qualified table name, e.g. `qr.scan_events`. */
  table: string;
  columns: readonly string[];
  /** A SELECT producing the columns in that order (generated inside ClickHouse, e.g. over numbers()). */
  select: string;
  dedupToken?: string;
}

/** `INSERT INTO ... SELECT ...`, with the same settings as insertText: rows made inside ClickHouse. */
export async function insertSelect(client: ClickHouseClient, ins: SelectInsert): Promise<void> {
  await client.command({
    query: `INSERT INTO ${ins.table} (${ins.columns.join(', ')}) SETTINGS ${insertSettings(ins.dedupToken)} ${ins.select}`,
  });
}
