// Prints {stored slug: redirects_count} of every code in the Postgres of the environment (DATA_DIR's
// embedded Postgres when DATABASE_URL is unset), as JSON: for tests that read the store of a service
// they have stopped.
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';

const app = await boot(loadConfig(), createLogger('silent'), { clickhouse: false, poolMax: 2 });
try {
  const rows = await app.db('qr_codes').select<{ slug: string; redirects_count: string }[]>('slug', 'redirects_count');
  process.stdout.write(JSON.stringify(Object.fromEntries(rows.map((r) => [r.slug, Number(r.redirects_count)]))));
} finally {
  await app.close();
}
// As qrctl: pool timers must not keep the process alive once stdout is flushed.
process.stdout.write('', () => process.exit(0));
