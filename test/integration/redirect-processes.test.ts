// REDIRECT_PROCESSES=2 on the embedded stores: two redirect processes share the port and hand their
// scan batches to the main process, which owns chDB. Under load, one redirect process is killed
// with SIGKILL; every scan whose 302 the client received is stored exactly once (its journal is
// replayed by the process that replaces it), and the service stops cleanly afterwards.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { waitFor } from '../helpers/poll.js';
import { createOrgWithQrctl, embeddedServiceEnv } from '../helpers/service-process.js';

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

/** Waits for `probe` (the test's own deadline bounds it), failing at once if the service exits. */
function until(what: string, probe: () => Promise<boolean>, child: ChildProcess): Promise<boolean> {
  return waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) while waiting for ${what}`);
      return probe();
    },
    Boolean,
    280_000,
    50,
  );
}

describe('REDIRECT_PROCESSES=2 on embedded chDB', function () {
  this.timeout(300_000);

  it('stores every served scan exactly once when a redirect process is killed under load', async () => {
    const { env, dataDir, apiPort, redirectPort } = await embeddedServiceEnv('redirect-processes', {
      REDIRECT_PROCESSES: '2',
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'warn',
    });
    const server = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    server.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    let loading = true;
    // Each request names itself in its Referer (stored as the scan's referrer host).
    const served = new Set<string>();
    try {
      await until(
        'readiness',
        async () => (await fetch(`http://127.0.0.1:${apiPort}/readyz`).catch(() => null))?.status === 200,
        server,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${output}`);
      });
      const auth = { Authorization: `Bearer ${await createOrgWithQrctl(env)}` };
      const domains = (await (await fetch(`http://127.0.0.1:${apiPort}/v1/domains`, { headers: auth })).json()) as {
        data: { ulid: string }[];
      };
      const created = await fetch(`http://127.0.0.1:${apiPort}/v1/qr-codes`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          slug: 'menu',
          destination: 'https://example.com/menu',
          domain_ulid: domains.data[0].ulid,
        }),
      });
      expect(created.status).to.equal(201);

      const before = await redirectProcesses(server.pid!);
      expect(before).to.have.length(2);

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
      loading = false;
      await Promise.all(loops);
    } finally {
      loading = false;
      agent.destroy();
      server.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
    expect(output).to.include('a redirect process died; starting another');

    const counts = JSON.parse(
      (await run(process.execPath, ['--import', 'tsx', 'test/helpers/scan-referrers.ts'], { env })).stdout,
    ) as Record<string, number>;
    const missing = [...served].filter((m) => counts[`${m}.test`] !== 1);
    expect(missing, 'served scans not stored exactly once').to.deep.equal([]);
    const twice = Object.entries(counts).filter(([, n]) => n !== 1);
    expect(twice, 'scans stored more than once').to.deep.equal([]);
    // Nothing left behind: every journal and spill file went in.
    expect(await fs.readdir(path.join(dataDir, 'spill')).catch(() => [])).to.deep.equal([]);
  });
});
