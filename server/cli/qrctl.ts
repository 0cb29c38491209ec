// qrctl: the operator CLI. In embedded mode it uses the running service's Postgres (its port is
// recorded under DATA_DIR) or starts the embedded stores itself when no process holds them.
import { boot } from '../bootstrap.js';
import { ConfigError, loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { ChdbBusyError } from '../stores/clickhouse.js';
import { helpText, parseCommand, reportError, runCommand, UsageError, type CliIo } from './commands.js';

const io: CliIo = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
  progress: (l) => {
    if (!process.stderr.isTTY) {
      if (l) process.stderr.write(l + '\n');
      return;
    }
    // Carriage return, the line, then erase what a longer previous line left (ECMA-48 EL).
    process.stderr.write(l ? `\r${l}\x1b[K` : '\n');
  },
  live: process.stderr.isTTY === true,
};

async function main(argv: string[]): Promise<number> {
  if (!argv.length || argv[0] === '--help' || argv[0] === 'help' || argv[0] === '-h') {
    io.out(helpText());
    return argv.length ? 0 : 2;
  }
  const asJson = argv.includes('--json');
  let parsed;
  try {
    parsed = parseCommand(argv);
  } catch (err) {
    return reportError(err, asJson, io);
  }
  let app;
  try {
    const config = loadConfig();
    const log = createLogger(process.env.QRCTL_LOG_LEVEL ?? 'silent', { process: 'qrctl' });
    app = await boot(config, log, { clickhouse: parsed.command.clickhouse === true, poolMax: 2 });
  } catch (err) {
    if (err instanceof ChdbBusyError || err instanceof ConfigError)
      return reportError(new UsageError(err.message), asJson, io);
    return reportError(err, asJson, io);
  }
  try {
    return await runCommand(app, parsed, io);
  } finally {
    await app.close();
  }
}

const code = await main(process.argv.slice(2));
// Exit explicitly once stdout is flushed: pool timers must not keep the process alive, and the
// tsx loader does not carry process.exitCode through.
process.stdout.write('', () => process.exit(code));
