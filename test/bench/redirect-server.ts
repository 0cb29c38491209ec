// The service side of `make bench-redirect`: boots the stores from the environment (DATABASE_URL,
// embedded chDB under DATA_DIR), creates an organization with two codes on the fallback origin
// (one for warm-up, one measured), serves the public redirect with scan recording on, and prints
// `LISTENING <port>`. On SIGTERM it drains (as the service does) and prints the measured code's
// scans in ClickHouse and the redirects served (redirects_count): `SCANS <count> <distinct> <served>`.
import { ulid } from 'ulid';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { createOrganization } from '../../server/organizations/service.js';
import { onShutdown } from '../../server/process.js';
import { startRedirectListener } from '../../server/redirect/app.js';

const config = loadConfig(process.env, { enableWorker: false });
const log = createLogger(config.logLevel);
const app = await boot(config, log);
const { org } = await createOrganization(app, { name: 'Bench', slug: 'bench', planCode: null, currency: 'EUR', ownerEmail: 'bench@example.com' });
const domain = await app.db('domains').where({ type: 'fallback' }).first('id');
const ids: Record<string, number> = {};
for (const slug of ['warm', 'go']) {
  const [row] = await app
    .db('qr_codes')
    .insert({ ulid: ulid(), org_id: org.id, domain_id: domain.id, slug: `bench/${slug}`, destination: JSON.stringify('https://example.com/landing?from=qr') })
    .returning('id');
  ids[slug] = Number(row.id);
}
const rd = await startRedirectListener(app, 0, '127.0.0.1');
process.stdout.write(`LISTENING ${rd.port}\n`);

onShutdown(log, async () => {
  await rd.close();
  const rs = await app.ch.client.query({
    query: `SELECT count() AS c, uniqExact(scan_id) AS u FROM ${app.ch.database}.scan_events WHERE code_id = {id:UInt64}`,
    query_params: { id: ids.go },
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ c: string; u: string }>();
  // redirects_count is counted by a separate path (counters.ts, flushed at close): the served figure.
  const served = (await app.db('qr_codes').where({ id: ids.go }).first('redirects_count')).redirects_count;
  process.stdout.write(`SCANS ${row.c} ${row.u} ${served} spilled=${rd.scans.stats.spilledRows}\n`);
  await app.close();
});
