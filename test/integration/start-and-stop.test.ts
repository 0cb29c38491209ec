// The README's path on a fresh data directory: the service starts its own embedded Postgres and
// chDB, `npx qrctl org create` (another process) uses the running service's Postgres, the
// printed token reads /v1/status, and SIGTERM stops everything cleanly. What a newcomer meets around
// it: a second start says in one line why it cannot start, and make says what it is doing.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ALREADY_RUNNING_EXIT } from '../../server/start-problems.js';
import { waitFor } from '../helpers/poll.js';
import { createOrgWithQrctl, embeddedServiceEnv, startService } from '../helpers/service-process.js';
import { testRoot } from '../helpers/stores.js';

const run = promisify(execFile);

/** Runs server/main.ts to its end; returns its exit code and everything it printed. */
function runToExit(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

/** Lines a person reads: not blank. */
const linesOf = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

describe('starting and stopping the service on embedded stores', function () {
  this.timeout(180_000);

  it('serves /v1/status to a token printed by qrctl, then stops on SIGTERM', async () => {
    const { env, dataDir, apiPort, redirectPort } = await embeddedServiceEnv('e2e-var', {
      QR_PRINT_BANNER: '1',
      LOG_LEVEL: 'info',
    });
    const server = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stdout = '';
    server.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
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

      const token = await createOrgWithQrctl(env);
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/status`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { status: string; organization: { slug: string } };
      expect(body.status).to.equal('ok');
      expect(body.organization.slug).to.equal('acme');
      const ready = await fetch(`http://127.0.0.1:${apiPort}/readyz`);
      expect(ready.status).to.equal(200);
      expect(((await ready.json()) as { listeners: unknown }).listeners).to.deep.equal({
        api: 'accepting',
        redirect: 'accepting',
      });
      const redirect = await fetch(`http://127.0.0.1:${redirectPort}/acme/nothing`, { redirect: 'manual' });
      expect(redirect.status).to.equal(404);

      // A second start on the same ports and data directory: one line, nothing touched.
      const second = await runToExit(env);
      expect(second.code).to.equal(ALREADY_RUNNING_EXIT);
      expect(linesOf(second.output)).to.deep.equal([
        `qr-service cannot start: the QR service is already running at http://127.0.0.1:${apiPort} (another \`make start\`?); ` +
          'stop it first (Ctrl-C in its terminal), or set API_PORT, REDIRECT_PORT and DATA_DIR to run a second one.',
      ]);
      expect((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status).to.equal(200);
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
    // The last line of a graceful stop says it completed; the worker's cron runs (no "cron is disabled").
    const last = JSON.parse(linesOf(stdout).at(-1)!) as { msg: string; signal: string };
    expect(last).to.include({ msg: 'shutdown complete', signal: 'SIGTERM' });
    expect(stdout).to.include('shutting down');
    expect(stdout).not.to.include('cron is disabled');
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

  it('stops on SIGTERM at once while clients hold connections that never sent a request, closing them', async () => {
    // A browser's speculative preconnect, or a client that aborted a live stream and opened a socket it
    // never used: Node does not count such a connection as idle, and the API's stop used to wait for as
    // long as the client kept it open.
    const { env, apiPort, redirectPort } = await embeddedServiceEnv('stop-silent', {
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'info',
    });
    const svc = startService(env);
    await svc.ready();
    // Each resolves to when its socket was closed.
    const silent = await Promise.all(
      [apiPort, redirectPort].map(
        (port) =>
          new Promise<{ closed: Promise<number> }>((resolve, reject) => {
            const socket = net.connect(port, '127.0.0.1', () =>
              resolve({ closed: new Promise((r) => socket.on('close', () => r(Date.now()))) }),
            );
            socket.on('error', reject);
          }),
      ),
    );
    // A request under way (its first line sent, not its end) is in flight: the stop lets it finish.
    const partial = net.connect(apiPort, '127.0.0.1');
    let answer = '';
    partial.on('data', (c: Buffer) => (answer += c.toString()));
    const partialClosed = new Promise<void>((r) => partial.on('close', () => r()));
    await new Promise<void>((resolve) =>
      partial.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', () => resolve()),
    );
    await new Promise((r) => setTimeout(r, 200)); // read by the service by then
    const stoppedAt = Date.now();
    svc.server.kill('SIGTERM');
    await waitFor(async () => svc.output.includes('shutting down'));
    partial.end('\r\n');
    const code = await svc.exited;
    expect(code).to.equal(0);
    const closedAfter = (await Promise.all(silent.map((s) => s.closed))).map((t) => t - stoppedAt);
    await partialClosed;
    expect(answer, 'the request under way was answered').to.match(/^HTTP\/1\.1 200 /);
    // Each closed by the stop itself, not after its listener's grace period for requests in flight
    // (API 10 s, redirect 5 s), nor when the silent clients let go (they never do).
    for (const [i, ms] of closedAfter.entries()) {
      expect(ms, `silent connection to the ${['API', 'redirect'][i]} closed at once`).to.be.below(5_000);
    }
    expect(svc.output).to.include('shutdown complete');
  });

  it('refuses a port another program holds in one line naming its setting, before touching the data directory', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    const dataDir = path.join(testRoot(), 'e2e-busy-port');
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, API_PORT: String(port), REDIRECT_PORT: '0' };
      delete env.DATABASE_URL;
      delete env.CLICKHOUSE_URL;
      const { code, output } = await runToExit(env);
      expect(code).to.equal(1);
      expect(linesOf(output)).to.deep.equal([
        `qr-service cannot start: port ${port} on 127.0.0.1 (API_PORT) is in use by another program; stop it or set API_PORT to a free port.`,
      ]);
      await fs.access(dataDir).then(
        () => expect.fail('the data directory was created'),
        () => undefined,
      );
    } finally {
      holder.close();
    }
  });

  it('make says it is installing dependencies, with npm reporting each step, then building and starting', async () => {
    // -n prints what would run; -W pretends package-lock.json changed, so the install step is due.
    const { stdout } = await run('make', ['-n', '-W', 'package-lock.json', 'start'], { env: { ...process.env } });
    const lines = linesOf(stdout);
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/Installing dependencies with npm/)).to.be.greaterThan(-1);
    expect(lines[at(/Installing dependencies/) + 1]).to.match(/^npm install .*--loglevel=http/);
    expect(at(/Building the web dashboard/)).to.be.greaterThan(at(/Installing dependencies/));
    // "==> Starting the service" is the service's own first line, printed once the ports are free.
    expect(at(/QR_PRINT_BANNER=1 .*server\/main\.ts/)).to.be.greaterThan(at(/Building the web dashboard/));
  });

  it('make start stopped by its process group under load (as a terminal or supervisor does) drains every answered scan', async () => {
    const { env, apiPort, redirectPort } = await embeddedServiceEnv('make-stop-var', {
      QR_PRINT_BANNER: '1',
      LOG_LEVEL: 'info',
    });
    /** The service as a user starts it; `detached` makes it the leader of its own process group. */
    const start = (cmd: string, args: string[]) => {
      const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let output = '';
      child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const up = new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => output.includes('QR service is up.') && (clearInterval(timer), resolve()), 50);
        void exited.then((code) => (clearInterval(timer), reject(new Error(`exited with ${code}:\n${output}`))));
      });
      return { child, exited, up, output: () => output };
    };
    const stopGroup = (child: ChildProcess) => process.kill(-child.pid!, 'SIGTERM');

    const made = start('make', ['--no-print-directory', 'start']);
    await made.up;
    expect(made.output()).to.include('==> Starting the service');
    // A second `make start` meanwhile: the one line the README promises, and make calls it done.
    const second = start('make', ['--no-print-directory', 'start']);
    second.up.catch(() => undefined); // it is not meant to come up
    expect(await second.exited).to.equal(0);
    expect(linesOf(second.output())).to.deep.equal([
      `qr-service cannot start: the QR service is already running at http://127.0.0.1:${apiPort} (another \`make start\`?); ` +
        'stop it first (Ctrl-C in its terminal), or set API_PORT, REDIRECT_PORT and DATA_DIR to run a second one.',
    ]);
    let answered = 0;
    let codeUlid: string;
    let token: string;
    try {
      token = await createOrgWithQrctl(env);
      const domains = await fetch(`http://127.0.0.1:${apiPort}/v1/domains`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      const fallback = ((await domains.json()) as { data: { ulid: string }[] }).data[0].ulid;
      const created = await fetch(`http://127.0.0.1:${apiPort}/v1/qr-codes`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ slug: 'drain', destination: 'https://example.com/', domain_ulid: fallback }),
      });
      expect(created.status).to.equal(201);
      codeUlid = ((await created.json()) as { data: { ulid: string } }).data.ulid;

      // 16 clients scanning on kept-alive connections until the service stops answering.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
      const scan = () =>
        new Promise<number>((resolve) => {
          const req = http.get(
            {
              host: '127.0.0.1',
              port: redirectPort,
              path: '/acme/drain',
              agent,
              headers: {
                Host: `localhost:${redirectPort}`,
                'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0',
              },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', () => resolve(0));
        });
      let stopped = false;
      const client = async () => {
        for (;;) {
          const status = await scan();
          if (status === 302) answered++;
          else if (stopped) return;
        }
      };
      const clients = Promise.all(Array.from({ length: 16 }, client));
      await waitFor(() => answered >= 500, Boolean, 120_000);
      stopGroup(made.child);
      stopped = true;
      await clients;
      agent.destroy();
    } finally {
      if (made.child.exitCode === null) stopGroup(made.child);
    }
    await made.exited;
    const nodeLines = linesOf(made.output()).filter((l) => l.startsWith('{'));
    expect(JSON.parse(nodeLines.at(-1)!)).to.include({ msg: 'shutdown complete' });
    expect(made.output()).to.not.include('second signal');

    // Started again on the same data: every answered scan is stored.
    const again = start(process.execPath, ['--import', 'tsx', 'server/main.ts']);
    await again.up;
    try {
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/analytics/qr-codes/${codeUlid}?range=7`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(res.status).to.equal(200);
      const stored = ((await res.json()) as { data: { totals: { scans: number } } }).data.totals.scans;
      expect(stored).to.equal(answered);
    } finally {
      stopGroup(again.child);
    }
    expect(await again.exited).to.equal(0);
  });
});
