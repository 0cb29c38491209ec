// Prints `SCANS <count> <distinct scan_id> <redirects_count>` for the codes whose slug is LIKE the
// argument (e.g. `bench/m%`, the traffic mix's codes) of a stopped
// service: its ClickHouse (DATA_DIR's chDB when CLICKHOUSE_URL is unset) and its Postgres
// (DATABASE_URL). The multi-core rows of `make bench-redirect` run it after each service stops
// (chDB opens one data path per process, so the bench process cannot read them itself).
import { loadConfig } from '../../server/config.js';
import { openClickHouse } from '../../server/stores/clickhouse.js';
import { createKnex } from '../../server/stores/postgres.js';

const config = loadConfig();
const db = createKnex(config.databaseUrl!, 1);
const ch = await openClickHouse(config);
try {
  const codes = (await db('qr_codes').whereLike('slug', process.argv[2]).select('id', 'redirects_count')) as {
    id: number;
    redirects_count: number;
  }[];
  const rs = await ch.client.query({
    query: `SELECT count() AS c, uniqExact(scan_id) AS u FROM ${ch.database}.scan_events WHERE code_id IN {ids:Array(UInt64)}`,
    query_params: { ids: codes.map((c) => Number(c.id)) },
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ c: string; u: string }>();
  const served = codes.reduce((sum, c) => sum + Number(c.redirects_count), 0);
  process.stdout.write(`SCANS ${row.c} ${row.u} ${served}\n`);
} finally {
  await ch.close();
  await db.destroy();
}
