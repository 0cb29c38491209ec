// A redirect killed outright under load loses no scan it answered, in both modes. REDIRECT_PROCESSES=2
// on the embedded stores: two redirect processes share the port and hand their scan batches to the
// main process, which owns chDB; one of them is killed with SIGKILL, and every scan whose 302 the
// client received is stored exactly once (its journal is replayed by the process that replaces it).
// One process (the default): the service itself is killed with SIGKILL and started again, and its
// journals are replayed at start.
import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createOrgWithQrctl, embeddedServiceEnv, startService, until } from '../helpers/service-process.js';

const run = promisify(execFile);
const tick = () => new Promise((r) => setImmediate(r));

/** The redirect processes of a service: its children running server/main.ts. */
async function redirectProcesses(primary: number): Promise<number[]> {
  const text = await fs.readFile(`/proc/${primary}/task/${primary}/children`, 'utf8').catch(() => '');
  const pids: number[] = [];
  for (const pid of text.split(' ').filter(Boolean).map(Number)) {
    const cmd = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes('server/main.ts')) pids.push(pid);
  }
  return pids;
}

/**
 * An organization made with qrctl and its code /acme/menu on the fallback origin; reads the code's
 * redirects_count through the API once the service's journals are all sent (and so counted).
 */
async function createMenuCode(
  env: NodeJS.ProcessEnv,
  dataDir: string,
): Promise<(child: ChildProcess) => Promise<number>> {
  const api = `http://127.0.0.1:${env.API_PORT}`;
  const auth = { Authorization: `Bearer ${await createOrgWithQrctl(env)}` };
  const domains = (await (await fetch(`${api}/v1/domains`, { headers: auth })).json()) as {
    data: { ulid: string }[];
  };
  const created = await fetch(`${api}/v1/qr-codes`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ slug: 'menu', destination: 'https://example.com/menu', domain_ulid: domains.data[0].ulid }),
  });
  expect(created.status).to.equal(201);
  const { ulid } = ((await created.json()) as { data: { ulid: string } }).data;
  return async (child) => {
    await until(
      'every journal sent',
      async () => !(await fs.readdir(path.join(dataDir, 'spill')).catch(() => [])).some((f) => f.endsWith('.tsv')),
      child,
    );
    const res = await fetch(`${api}/v1/qr-codes/${ulid}`, { headers: auth });
    return Number(((await res.json()) as { data: { redirects_count: number } }).data.redirects_count);
  };
}

/** redirects_count equals the scans stored (all of them /acme/menu's). */
function expectCounted(redirectsCount: number, stored: Record<string, number>): void {
  const scans = Object.values(stored).reduce((a, n) => a + n, 0);
  expect(redirectsCount, 'redirects_count against the stored scans').to.equal(scans);
}

/**
 * 16 keep-alive loops on /acme/menu until stop(); each request names itself in its Referer (stored
 * as the scan's referrer host), and `served` holds the names whose 302 the client received.
 */
function driveLoad(redirectPort: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const served = new Set<string>();
  let loading = true;
  let next = 0;
  const get = (mark: string) =>
    new Promise<number>((resolve) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port: redirectPort,
          path: '/acme/menu',
          agent,
          headers: {
            Host: `localhost:${redirectPort}`,
            Referer: `http://${mark}.test/`,
            'User-Agent': 'Mozilla/5.0 (iPhone)',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', () => resolve(0));
      // A connection the cluster primary handed to the process as it was killed is never
      // answered (node:cluster keeps it open); a client gives up on it, as real ones do.
      req.setTimeout(5000, () => req.destroy());
    });
  const loop = async () => {
    while (loading) {
      const mark = `r${next++}`;
      if ((await get(mark)) === 302) served.add(mark);
      else await tick();
    }
  };
  const loops = Array.from({ length: 16 }, loop);
  return {
    served,
    async stop() {
      loading = false;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

/** The service's scans by referrer host (read from its chDB once it is stopped). */
async function storedByReferrer(env: NodeJS.ProcessEnv): Promise<Record<string, number>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/scan-referrers.ts'], { env });
  return JSON.parse(stdout) as Record<string, number>;
}

/** Every served scan stored exactly once, and nothing stored twice. */
function expectExactlyOnce(served: Set<string>, counts: Record<string, number>): void {
  const missing = [...served].filter((m) => counts[`${m}.test`] !== 1);
  expect(missing, 'served scans not stored exactly once').to.deep.equal([]);
  const twice = Object.entries(counts).filter(([, n]) => n !== 1);
  expect(twice, 'scans stored more than once').to.deep.equal([]);
}

describe('REDIRECT_PROCESSES=2 on embedded chDB', function () {
  this.timeout(300_000);

  it('stores every served scan exactly once when a redirect process is killed under load', async () => {
    const { env, dataDir, redirectPort } = await embeddedServiceEnv('redirect-processes', {
      REDIRECT_PROCESSES: '2',
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'warn',
    });
    const svc = startService(env);
    const { server } = svc;
    let load: ReturnType<typeof driveLoad> | null = null;
    let counted: number | undefined;
    try {
      await svc.ready();
      const redirectsCount = await createMenuCode(env, dataDir);
      const before = await redirectProcesses(server.pid!);
      expect(before).to.have.length(2);
      load = driveLoad(redirectPort);
      const { served } = load;

      await until('1500 served', async () => served.size >= 1500, server);
      const [victim] = before;
      process.kill(victim, 'SIGKILL');
      const servedAtKill = served.size;
      // Its replacement starts, serves, and replays the journals it left.
      await until(
        'a replacement',
        async () => {
          const now = await redirectProcesses(server.pid!);
          return now.length === 2 && !now.includes(victim);
        },
        server,
      );
      await until('1500 more served', async () => served.size >= servedAtKill + 1500, server);
      const spill = path.join(dataDir, 'spill');
      await until(
        'the journals of the killed process replayed',
        async () => !(await fs.readdir(spill).catch(() => [])).some((f) => f.includes(`-${victim}-`)),
        server,
      );
      await load.stop();
      counted = await redirectsCount(server);
    } finally {
      await load?.stop();
      server.kill('SIGTERM');
    }
    expect(await svc.exited).to.equal(0);
    expect(svc.output).to.include('a redirect process died; starting another');
    const stored = await storedByReferrer(env);
    expectExactlyOnce(load.served, stored);
    expectCounted(Number(counted), stored);
    // Nothing left behind: every journal and spill file went in.
    expect(await fs.readdir(path.join(dataDir, 'spill')).catch(() => [])).to.deep.equal([]);
  });
});

describe('one process (REDIRECT_PROCESSES unset) on embedded chDB', function () {
  this.timeout(300_000);

  it('stores every served scan exactly once when the service is killed with SIGKILL under load and started again', async () => {
    const { env, dataDir, redirectPort } = await embeddedServiceEnv('redirect-sigkill', {
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'warn',
    });
    const first = startService(env);
    let load: ReturnType<typeof driveLoad> | null = null;
    let redirectsCount: ((child: ChildProcess) => Promise<number>) | undefined;
    let counted: number | undefined;
    try {
      await first.ready();
      redirectsCount = await createMenuCode(env, dataDir);
      load = driveLoad(redirectPort);
      const { served } = load;
      await until('1500 served', async () => served.size >= 1500, first.server);
      // Several flush windows in, and a batch being filled: what a hard crash used to lose.
      first.server.kill('SIGKILL');
      expect(await first.exited).to.equal(null);
      await load.stop();
    } finally {
      await load?.stop();
      first.server.kill('SIGKILL');
    }
    // The killed process's journals are on disk; the next start replays them with their tokens.
    const left = await fs.readdir(path.join(dataDir, 'spill'));
    expect(left.some((f) => f.startsWith('scan_events-') && f.endsWith('.tsv'))).to.equal(true);
    const second = startService(env);
    try {
      await second.ready();
      await until(
        'the journals replayed',
        async () => !(await fs.readdir(path.join(dataDir, 'spill')).catch(() => [])).some((f) => f.endsWith('.tsv')),
        second.server,
      );
      counted = await redirectsCount!(second.server);
    } finally {
      second.server.kill('SIGTERM');
    }
    expect(await second.exited).to.equal(0);
    // The killed service's Postgres was taken over and stopped with the second one: none is left.
    expect(await fs.stat(path.join(dataDir, 'postgres', 'postmaster.pid')).catch(() => null)).to.equal(null);
    const stored = await storedByReferrer(env);
    expectExactlyOnce(load.served, stored);
    expectCounted(Number(counted), stored);
    expect(load.served.size).to.be.greaterThan(1500);
  });
});
