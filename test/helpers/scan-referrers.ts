// Prints {referrer: scans} of scan_events in the ClickHouse of the environment (DATA_DIR's chDB when
// CLICKHOUSE_URL is unset), as JSON: for tests that read the store of a service they have stopped
// (chDB opens one data path per process, and the test process has its own).
import { loadConfig } from '../../server/config.js';
import { openClickHouse } from '../../server/stores/clickhouse.js';

const ch = await openClickHouse(loadConfig());
try {
  const rs = await ch.client.query({
    query: `SELECT referrer, toUInt32(count()) AS n FROM ${ch.database}.scan_events GROUP BY referrer`,
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ referrer: string; n: number }>();
  process.stdout.write(JSON.stringify(Object.fromEntries(rows.map((r) => [r.referrer, Number(r.n)]))));
} finally {
  await ch.close();
}
