// `make worker`: graphile-worker alone, against the same stores as the server.
import { boot } from '../server/bootstrap.js';
import { loadConfig } from '../server/config.js';
import { createLogger } from '../server/logger.js';
import { onShutdown } from '../server/process.js';
import { startWorker } from './index.js';

const config = loadConfig();
const log = createLogger(config.logLevel, { process: 'worker' }, config.logFormat);
// In embedded mode the server process owns chDB; a standalone worker then runs without ClickHouse.
const clickhouse = Boolean(config.clickhouseUrl);
const app = await boot(config, log, { clickhouse });
const runner = await startWorker(app, { clickhouse });
onShutdown(log, async () => {
  await runner.stop();
  await app.close();
});
