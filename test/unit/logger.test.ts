import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { loadConfig } from '../../server/config.js';

const run = promisify(execFile);

/** What a process logging one line through createLogger prints, with LOG_FORMAT as given. */
async function logged(format: string | undefined): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  if (format === undefined) delete env.LOG_FORMAT;
  else env.LOG_FORMAT = format;
  const script =
    "import { loadConfig } from './server/config.ts'; import { createLogger } from './server/logger.ts';" +
    "const c = loadConfig(); createLogger(c.logLevel, {}, c.logFormat).info({ port: 3000 }, 'the service is up');";
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env });
  return stdout;
}

describe('log format (LOG_FORMAT)', function () {
  this.timeout(60_000);

  it('writes JSON lines when standard output is not a terminal (auto, the default)', async () => {
    const line = JSON.parse((await logged(undefined)).trim()) as Record<string, unknown>;
    expect(line).to.include({ level: 30, msg: 'the service is up', port: 3000 });
  });

  it('writes readable lines with pretty, whatever the output is', async () => {
    const out = await logged('pretty');
    expect(out).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: the service is up\n {4}port: 3000\n$/);
  });

  it('refuses a format it does not know', () => {
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).to.throw('LOG_FORMAT must be one of auto, json, pretty, got "xml"');
    expect(loadConfig({}).logFormat).to.equal('auto');
  });
});
