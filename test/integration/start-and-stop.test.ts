// The README's path on a fresh data directory: the service starts its own embedded Postgres and
// chDB, `npx qrctl org create` (another process) uses the running service's Postgres, the
// printed token reads /v1/status, and SIGTERM stops everything cleanly.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { freePort } from '../../server/stores/postgres.js';
import { testRoot } from '../helpers/stores.js';

const run = promisify(execFile);

describe('starting and stopping the service on embedded stores', function () {
  this.timeout(180_000);

  it('serves /v1/status to a token printed by qrctl, then stops on SIGTERM', async () => {
    const dataDir = path.join(testRoot(), 'e2e-var');
    const [apiPort, redirectPort] = [await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      API_PORT: String(apiPort),
      REDIRECT_PORT: String(redirectPort),
      FALLBACK_ORIGINS: `http://localhost:${redirectPort}`,
      QR_PRINT_BANNER: '1',
      LOG_LEVEL: 'warn',
    };
    delete env.DATABASE_URL;
    delete env.CLICKHOUSE_URL;
    const server = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const onData = (c: Buffer) => {
        output += c.toString();
        if (output.includes('QR service is up.')) resolve();
      };
      server.stdout.on('data', onData);
      server.stderr.on('data', onData);
      void exited.then((code) => reject(new Error(`service exited with ${code}:\n${output}`)));
    });
    try {
      expect(output).to.include(`API:      http://127.0.0.1:${apiPort}/v1/status`);
      expect(output).to.include('npx qrctl org create');
      const state = JSON.parse(await fs.readFile(path.join(dataDir, 'postgres.json'), 'utf8'));
      expect(state.port).to.be.a('number');

      const { stdout } = await run(
        path.resolve('bin/qrctl.js'),
        [
          'org',
          'create',
          '--name',
          'Acme',
          '--slug',
          'acme',
          '--plan',
          'business_monthly',
          '--currency',
          'EUR',
          '--owner-email',
          'you@example.com',
          '--json',
        ],
        { env },
      );
      const { token } = JSON.parse(stdout) as { token: string };
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/status`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { status: string; organization: { slug: string } };
      expect(body.status).to.equal('ok');
      expect(body.organization.slug).to.equal('acme');
      expect((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status).to.equal(200);
      const redirect = await fetch(`http://127.0.0.1:${redirectPort}/acme/nothing`, { redirect: 'manual' });
      expect(redirect.status).to.equal(404);
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
    // The embedded Postgres went down with it and the chDB directory was released.
    await fs.access(path.join(dataDir, 'postgres.json')).then(
      () => expect.fail('postgres.json still present'),
      () => undefined,
    );
    await fs.access(path.join(dataDir, 'clickhouse', 'owner.pid')).then(
      () => expect.fail('chDB lock still held'),
      () => undefined,
    );
  });
});
