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
  const connection = createChdbConnection({ path: dir });
  const client = createClient({ connection } as Parameters<typeof createClient>[0]);
  chdbInserts.set(client, (params) => connection.chdb.rawInsert(params));
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

type RawInsert = (params: {
  table: string;
  columns?: string[];
  format: 'TabSeparated' | 'JSONEachRow';
  values: Buffer;
  settings: Record<string, string | number>;
}) => Promise<unknown>;

/**
 * chDB's own insert of a Buffer, by the client over it. Through @clickhouse/client's connection,
 * chDB joins the statement and the rows into one JavaScript string (and the rows read back from
 * their stream into another): strings of megabytes that V8 keeps in its large-object space until a
 * full collection, which under steady scan traffic made the heap grow by tens of MiB a second
 * between collections. The raw insert hands the bytes to the engine without a string.
 */
const chdbInserts = new WeakMap<ClickHouseClient, RawInsert>();

export interface TextInsert {
  /** Qualified table name, e.g. `qr.scan_events`. */
  table: string;
  columns?: readonly string[];
  format: 'TabSeparated' | 'JSONEachRow';
  /** The rows, already in `format`. */
  body: string | Buffer;
  /** Deduplicates a retried batch: a second insert with the same token is a no-op. */
  dedupToken?: string;
}

function settingValue(v: string): string {
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The settings of every insert (an explicit empty token when none is given, so none is inherited). */
function insertSettings(dedupToken: string | undefined): string {
  return Object.entries(insertSettingValues(dedupToken))
    .map(([k, v]) => `${k} = ${typeof v === 'string' ? settingValue(v) : v}`)
    .join(', ');
}

/**
 * optimize_on_insert = 0: the rollup tables (AggregatingMergeTree) do not merge the rows of an
 * inserted block that share a key while inserting; their background merges and every query's own
 * GROUP BY merge them, so answers are the same. It saved about 15% of what recording a scan costs
 * ClickHouse, background merges included (docs/performance.md, "Recording a scan").
 */
function insertSettingValues(dedupToken: string | undefined): Record<string, string | number> {
  return {
    async_insert: 0,
    insert_deduplicate: 1,
    insert_deduplication_token: dedupToken ?? '',
    optimize_on_insert: 0,
  };
}

/**
 * The one way rows are inserted. Settings ride in the INSERT statement, never in
 * `clickhouse_settings`: chDB's connection turns those into session-wide SET statements that stay
 * in force for every later query of the process, so a deduplication token would make the next
 * unrelated insert pass for a retry and be dropped. test/unit/clickhouse-settings.test.ts keeps
 * `clickhouse_settings` out of the code base.
 */
export async function insertText(client: ClickHouseClient, ins: TextInsert): Promise<void> {
  const raw = chdbInserts.get(client);
  if (raw) {
    const values = typeof ins.body === 'string' ? Buffer.from(ins.body, 'utf8') : ins.body;
    // An empty insert is a no-op, as @clickhouse/client's is (chDB refuses "No data to insert").
    if (!values.some((b) => b !== 0x0a && b !== 0x20 && b !== 0x09 && b !== 0x0d)) return;
    await raw({
      table: ins.table,
      columns: ins.columns ? [...ins.columns] : undefined,
      format: ins.format,
      values,
      // In the statement (INSERT ... SETTINGS ...), as for a server: never session-wide.
      settings: insertSettingValues(ins.dedupToken),
    });
    return;
  }
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
