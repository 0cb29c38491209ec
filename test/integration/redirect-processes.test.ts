// A redirect killed outright under load loses no scan it answered, in both modes. REDIRECT_PROCESSES=2
// on the embedded stores: two redirect processes share the port and hand their scan batches to the
// main process, which owns chDB; one of them is killed with SIGKILL, and every scan whose 302 the
// client received is stored exactly once (its journal is replayed by the process that replaces it).
// One process (the default): the service itself is killed with SIGKILL and started again, and its
// journals are replayed at start. Half the load goes to a capped code, served from blocks reserved
// in Postgres: the killed process's unused reservation comes back, so both codes' redirects_count
// equal their stored scans.
import { execFile } from 'node:child_process';
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

/** The codes the load scans: /acme/menu without a cap and /acme/capped with one it never reaches. */
const CODES = [
  { slug: 'menu', mark: 'r', body: {} },
  { slug: 'capped', mark: 'c', body: { redirect_cap: 10_000_000 } },
] as const;

/** An organization made with qrctl and its codes (CODES) on the fallback origin. */
async function createCodes(env: NodeJS.ProcessEnv): Promise<void> {
  const api = `http://127.0.0.1:${env.API_PORT}`;
  const auth = { Authorization: `Bearer ${await createOrgWithQrctl(env)}` };
  const domains = (await (await fetch(`${api}/v1/domains`, { headers: auth })).json()) as {
    data: { ulid: string }[];
  };
  for (const { slug, body } of CODES) {
    const created = await fetch(`${api}/v1/qr-codes`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        slug,
        destination: `https://example.com/${slug}`,
        domain_ulid: domains.data[0].ulid,
        ...body,
      }),
    });
    expect(created.status).to.equal(201);
  }
}

/** The codes' redirects_count by stored slug (read from the service's Postgres once it is stopped). */
async function storedCounts(env: NodeJS.ProcessEnv): Promise<Record<string, number>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/code-counts.ts'], { env });
  return JSON.parse(stdout) as Record<string, number>;
}

/** Each code's redirects_count equals its stored scans (told apart by the mark of their referrer). */
function expectCounted(counts: Record<string, number>, stored: Record<string, number>): void {
  for (const { slug, mark } of CODES) {
    const scans = Object.entries(stored)
      .filter(([referrer]) => referrer.startsWith(mark))
      .reduce((a, [, n]) => a + n, 0);
    expect(scans, `scans of ${slug}`).to.be.greaterThan(0);
    expect(counts[`acme/${slug}`], `redirects_count of ${slug} against its stored scans`).to.equal(scans);
  }
}

/**
 * 16 keep-alive loops, half on each of CODES, until stop(); each request names itself in its Referer
 * (stored as the scan's referrer host, marked by its code), and `served` holds the names whose 302 the
 * client received.
 */
function driveLoad(redirectPort: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const served = new Set<string>();
  let loading = true;
  let next = 0;
  const get = (code: (typeof CODES)[number], mark: string) =>
    new Promise<number>((resolve) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port: redirectPort,
          path: `/acme/${code.slug}`,
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
  const loop = async (code: (typeof CODES)[number]) => {
    while (loading) {
      const mark = `${code.mark}${next++}`;
      if ((await get(code, mark)) === 302) served.add(mark);
      else await tick();
    }
  };
  const loops = Array.from({ length: 16 }, (_, i) => loop(CODES[i % CODES.length]));
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
  this.timeout(480_000);

  it('stores every served scan exactly once when a redirect process is killed under load', async () => {
    const { env, dataDir, redirectPort } = await embeddedServiceEnv('redirect-processes', {
      REDIRECT_PROCESSES: '2',
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'warn',
    });
    const svc = startService(env);
    const { server } = svc;
    let load: ReturnType<typeof driveLoad> | null = null;
    try {
      await svc.ready();
      await createCodes(env);
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
    } finally {
      await load?.stop();
      server.kill('SIGTERM');
    }
    expect(await svc.exited).to.equal(0);
    expect(svc.output).to.include('a redirect process died; starting another');
    const stored = await storedByReferrer(env);
    expectExactlyOnce(load.served, stored);
    expectCounted(await storedCounts(env), stored);
    // Nothing left behind: every journal and spill file went in.
    expect(await fs.readdir(path.join(dataDir, 'spill')).catch(() => [])).to.deep.equal([]);
  });
});

describe('one process (REDIRECT_PROCESSES unset) on embedded chDB', function () {
  this.timeout(480_000);

  it('stores every served scan exactly once when the service is killed with SIGKILL under load and started again', async () => {
    const { env, dataDir, redirectPort } = await embeddedServiceEnv('redirect-sigkill', {
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'warn',
    });
    const first = startService(env);
    let load: ReturnType<typeof driveLoad> | null = null;
    try {
      await first.ready();
      await createCodes(env);
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
    } finally {
      second.server.kill('SIGTERM');
    }
    expect(await second.exited).to.equal(0);
    // The killed service's Postgres was taken over and stopped with the second one: none is left.
    expect(await fs.stat(path.join(dataDir, 'postgres', 'postmaster.pid')).catch(() => null)).to.equal(null);
    const stored = await storedByReferrer(env);
    expectExactlyOnce(load.served, stored);
    expectCounted(await storedCounts(env), stored);
    expect(load.served.size).to.be.at.least(1500);
  });
});

describe('journals of a version before sql/0022 on embedded chDB', function () {
  this.timeout(480_000);

  it('stores their scans once and recounts both codes to their stored scans at the next start', async () => {
    const { env, dataDir, redirectPort } = await embeddedServiceEnv('redirect-pre-0022', {
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'warn',
    });
    const first = startService(env);
    let load: ReturnType<typeof driveLoad> | null = null;
    try {
      await first.ready();
      await createCodes(env);
      load = driveLoad(redirectPort);
      const { served } = load;
      await until('300 served', async () => served.size >= 300, first.server);
      await load.stop();
    } finally {
      await load?.stop();
      first.server.kill('SIGTERM');
    }
    expect(await first.exited).to.equal(0);
    // What a process of that version left when it was killed: its journal and spill file, and the
    // counts it had written (a capped code's include its unused reservation).
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/pre-0022-crash.ts'], { env });
    const answered = JSON.parse(stdout) as string[];
    expect(answered).to.have.length(2 * (40 + 25));
    const second = startService(env);
    try {
      await second.ready();
    } finally {
      second.server.kill('SIGTERM');
    }
    expect(await second.exited).to.equal(0);
    expect(await fs.readdir(path.join(dataDir, 'spill'))).to.deep.equal([]);
    const stored = await storedByReferrer(env);
    expectExactlyOnce(new Set([...load.served, ...answered]), stored);
    expectCounted(await storedCounts(env), stored);
  });
});
