// The scan spill directory (DATA_DIR/spill) as operators see it: the backlog of spill files and
// journals waiting for ClickHouse, and the quarantine of batches ClickHouse cannot parse.
//
// A batch whose insert fails with a parse error (the rows, not the connection) would fail the same
// way on every retry and hold up every batch behind it. The scan buffer moves it aside to
// `spill/quarantine/<table>-<token>.ndjson` (one line, the spill format `{token, tsv, rows}` plus
// where it came from and the error) and goes on. An operator lists, inspects and, after fixing the
// rows, re-queues it (qrctl quarantine ...): it goes back as a spill file of no live process,
// replayed within a minute with its own token, so it is stored once.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { ulid } from 'ulid';

/** A batch as the scan buffer spills it (server/redirect/scan-buffer.ts): its rows as bytes or text. */
interface Batch {
  token: string;
  tsv: string | Buffer;
  rows: number;
}

/** A batch's rows as text (for a spill or quarantine file, or another process's channel). */
export function batchText(batch: Batch): string {
  return typeof batch.tsv === 'string' ? batch.tsv : batch.tsv.toString('utf8');
}

/** The spill directory of a data directory. */
export function spillDirOf(dataDir: string): string {
  return path.join(dataDir, 'spill');
}

export function quarantineDirOf(spillDir: string): string {
  return path.join(spillDir, 'quarantine');
}

/** Whether a process runs (EPERM: it runs under another user). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The ClickHouse error codes of rows that cannot be read (the list of ClickHouse's own
 * isParseError, src/Processors/Formats/IRowInputFormat.cpp, plus CANNOT_PARSE_TEXT and
 * CANNOT_PARSE_ESCAPE_SEQUENCE): the same rows fail the same way on every try.
 */
const PARSE_ERROR_CODES = new Set([
  6, // CANNOT_PARSE_TEXT
  25, // CANNOT_PARSE_ESCAPE_SEQUENCE
  26, // CANNOT_PARSE_QUOTED_STRING
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  33, // CANNOT_READ_ALL_DATA
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  69, // ARGUMENT_OUT_OF_BOUND (decimals)
  72, // CANNOT_PARSE_NUMBER
  117, // INCORRECT_DATA
  130, // CANNOT_READ_ARRAY_FROM_TEXT
  131, // TOO_LARGE_STRING_SIZE
  376, // CANNOT_PARSE_UUID
  467, // CANNOT_PARSE_BOOL
  691, // UNKNOWN_ELEMENT_OF_ENUM
]);

/**
 * The ClickHouse error code of a failed insert: chDB's `clickhouseCode`, the HTTP client's `code`
 * (a numeric string), or the `Code: N.` ClickHouse puts first in every exception's text (what an
 * insert relayed by another process carries, scan-ipc.ts).
 */
export function clickHouseCode(err: unknown): number | null {
  const e = err as { clickhouseCode?: unknown; code?: unknown; message?: unknown } | null;
  if (typeof e?.clickhouseCode === 'number') return e.clickhouseCode;
  if (typeof e?.code === 'string' && /^\d+$/.test(e.code)) return Number(e.code);
  const m = typeof e?.message === 'string' ? /\bCode: (\d+)\./.exec(e.message) : null;
  return m ? Number(m[1]) : null;
}

/** Whether an insert failed on the rows themselves (retrying cannot help), not on the connection. */
export function isParseError(err: unknown): boolean {
  const code = clickHouseCode(err);
  return code !== null && PARSE_ERROR_CODES.has(code);
}

export interface QuarantinedBatch {
  token: string;
  table: string;
  rows: number;
  /** The spill file or journal it was read from ('' when it failed on its first insert). */
  from: string;
  error: string;
  at: string;
  file: string;
}

/** Moves a batch aside (atomically: a temporary file, then a rename); returns its file. */
export async function quarantineBatch(
  spillDir: string,
  table: string,
  batch: Batch,
  from: string,
  error: string,
): Promise<string> {
  const dir = quarantineDirOf(spillDir);
  await fsp.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${table}-${batch.token}.ndjson`);
  const entry = {
    token: batch.token,
    tsv: batchText(batch),
    rows: batch.rows,
    table,
    from,
    error: error.slice(0, 2000),
    at: new Date().toISOString(),
  };
  await fsp.writeFile(`${file}.tmp`, JSON.stringify(entry) + '\n');
  await fsp.rename(`${file}.tmp`, file);
  return file;
}

async function readEntry(file: string): Promise<QuarantinedBatch & { tsv: string }> {
  const v = JSON.parse(await fsp.readFile(file, 'utf8')) as Partial<QuarantinedBatch & { tsv: string }>;
  if (typeof v.token !== 'string' || typeof v.tsv !== 'string' || typeof v.table !== 'string') {
    throw new Error(`${file} is not a quarantined batch (token, table and tsv are required)`);
  }
  return {
    token: v.token,
    table: v.table,
    rows: typeof v.rows === 'number' ? v.rows : 0,
    from: String(v.from ?? ''),
    error: String(v.error ?? ''),
    at: String(v.at ?? ''),
    file,
    tsv: v.tsv,
  };
}

/** The quarantined batches, oldest first. */
export async function listQuarantine(spillDir: string): Promise<QuarantinedBatch[]> {
  const dir = quarantineDirOf(spillDir);
  const names = (await fsp.readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.ndjson')).sort();
  const out: QuarantinedBatch[] = [];
  for (const f of names) {
    // eslint-disable-next-line @typescript-eslint/no-unused-vars
    const { tsv, ...entry } = await readEntry(path.join(dir, f));
    out.push(entry);
  }
  return out;
}

/** The quarantined batch with this token (its rows included), or null. */
export async function findQuarantined(
  spillDir: string,
  token: string,
): Promise<(QuarantinedBatch & { tsv: string }) | null> {
  if (!/^[0-9A-Za-z]{1,64}$/.test(token)) return null;
  const dir = quarantineDirOf(spillDir);
  const name = (await fsp.readdir(dir).catch(() => [] as string[])).find((f) => f.endsWith(`-${token}.ndjson`));
  return name ? readEntry(path.join(dir, name)) : null;
}

/**
 * Puts a quarantined batch (fixed in its file by the operator) back in the spill directory as a
 * file of no live process, `<table>-requeued-<ulid>.ndjson`, with its token and its row count
 * taken again from its rows; the scan buffers replay it within a minute. Returns the new file.
 */
export async function requeueQuarantined(
  spillDir: string,
  token: string,
): Promise<{ file: string; rows: number } | null> {
  const entry = await findQuarantined(spillDir, token);
  if (!entry) return null;
  const tsv = entry.tsv.endsWith('\n') || !entry.tsv ? entry.tsv : entry.tsv + '\n';
  const rows = tsv.split('\n').length - 1;
  const file = path.join(spillDir, `${entry.table}-requeued-${ulid()}.ndjson`);
  await fsp.writeFile(`${file}.tmp`, JSON.stringify({ token: entry.token, tsv, rows }) + '\n');
  await fsp.rename(`${file}.tmp`, file);
  await fsp.rm(entry.file, { force: true });
  return { file, rows };
}

/** The process id in a spill file's or journal's name (`<table>-<pid>-<ulid>`), NaN for a re-queued one. */
export function spillFilePid(name: string, table: string): number {
  return Number(name.slice(table.length + 1).split('-')[0]);
}

/** Whether a spill file or journal of this process id (of any table) is still in the spill directory. */
export function pidHasSpill(spillDir: string, pid: number): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(spillDir);
  } catch {
    return false;
  }
  return names.some((f) => f.includes(`-${pid}-`) && (f.endsWith('.tsv') || f.endsWith('.ndjson')));
}

/**
 * What waits in the spill directory for ClickHouse: spill files (`.ndjson`) and journals (`.tsv`)
 * of processes that are gone. A live process's journal is its batch being filled, not a backlog.
 * Synchronous (a directory listing), for the metrics' collect and /readyz.
 */
export function spillBacklog(spillDir: string): { files: number; bytes: number; quarantined: number } {
  let files = 0;
  let bytes = 0;
  let names: string[] = [];
  try {
    names = fs.readdirSync(spillDir);
  } catch {
    // No spill directory: nothing waits.
  }
  for (const f of names) {
    const m = /^(.+)-([^-]+)-[0-9A-Z]+\.(ndjson|tsv)$/.exec(f);
    if (!m) continue;
    if (m[3] === 'tsv' && pidAlive(Number(m[2]))) continue;
    files++;
    try {
      bytes += fs.statSync(path.join(spillDir, f)).size;
    } catch {
      // Replayed and removed meanwhile.
    }
  }
  let quarantined = 0;
  try {
    quarantined = fs.readdirSync(quarantineDirOf(spillDir)).filter((f) => f.endsWith('.ndjson')).length;
  } catch {
    // No quarantine yet.
  }
  return { files, bytes, quarantined };
}
