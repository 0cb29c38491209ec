// The live scan stream with REDIRECT_PROCESSES=2 (docs/stream.md): the service as `make start` runs
// it, two redirect processes sharing the port (their batches inserted by the primary, which owns
// chDB, and recorded in the stream's ledger by the redirect process that sealed them), and the
// stream served by the primary's API. Every scan answered reaches every subscriber exactly once.
import http from 'node:http';
import { expect } from 'chai';
import { waitFor } from '../helpers/poll.js';
import { createOrgWithQrctl, embeddedServiceEnv, startService, until } from '../helpers/service-process.js';
import { TestEventSource } from '../helpers/sse.js';
import { ANDROID, DESKTOP, IPHONE } from './redirect-fixtures.js';

describe('live scan stream with REDIRECT_PROCESSES=2', function () {
  this.timeout(600_000);

  it('delivers every scan answered by either redirect process to every subscriber exactly once', async () => {
    const { env } = await embeddedServiceEnv('scan-stream-processes', {
      REDIRECT_PROCESSES: '2',
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'warn',
    });
    const svc = startService(env);
    const sources: TestEventSource[] = [];
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      await svc.ready();
      const api = `http://127.0.0.1:${env.API_PORT}`;
      const token = await createOrgWithQrctl(env);
      const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
      const domains = (await (await fetch(`${api}/v1/domains`, { headers: auth })).json()) as {
        data: { ulid: string }[];
      };
      const codes: string[] = [];
      for (const slug of ['menu', 'poster']) {
        const res = await fetch(`${api}/v1/qr-codes`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ slug, destination: `https://example.com/${slug}`, domain_ulid: domains.data[0].ulid }),
        });
        expect(res.status).to.equal(201);
        codes.push(((await res.json()) as { data: { ulid: string } }).data.ulid);
      }
      for (let i = 0; i < 2; i++) sources.push(new TestEventSource(`${api}/v1/scans/stream`, token));
      await waitFor(() => sources.every((s) => s.opened > 0));

      // 8 keep-alive connections, handed to the two processes in turn.
      const agents = [IPHONE, ANDROID, DESKTOP];
      const get = (i: number) =>
        new Promise<number>((resolve, reject) => {
          const req = http.get(
            {
              host: '127.0.0.1',
              port: Number(env.REDIRECT_PORT),
              path: `/acme/${i % 2 ? 'menu' : 'poster'}`,
              headers: { Host: `localhost:${env.REDIRECT_PORT}`, 'User-Agent': agents[i % 3] },
              agent,
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
        });
      const total = 400;
      let next = 0;
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < total) statuses.push(await get(next++));
        }),
      );
      expect(statuses.filter((s) => s === 302)).to.have.length(total);

      await until('every scan streamed', async () => sources.every((s) => s.scans().length >= total), svc.server);
      for (const s of sources) {
        const ids = s.scans().map((e) => e.data.scan_id);
        expect(new Set(ids).size, 'no scan twice').to.equal(total);
        expect(s.scans().filter((e) => e.data.code_ulid === codes[0])).to.have.length(total / 2);
      }
      // Nothing more arrives (no scan doubled by a late batch).
      await new Promise((r) => setTimeout(r, 1500));
      expect(sources.map((s) => s.scans().length)).to.deep.equal([total, total]);
      // The scans are those the raw export has.
      const stored: string[] = [];
      for (const code of codes) {
        const page = await fetch(
          `${api}/v1/analytics/qr-codes/${code}/raw-export?range=7&limit=5000&include_bots=true`,
          {
            headers: auth,
          },
        );
        stored.push(
          ...((await page.json()) as { data: { rows: { scan_id: string }[] } }).data.rows.map((r) => r.scan_id),
        );
      }
      expect(
        sources[0]
          .scans()
          .map((e) => e.data.scan_id)
          .sort(),
      ).to.deep.equal(stored.sort());
    } finally {
      for (const s of sources) s.close();
      agent.destroy();
      svc.server.kill('SIGTERM');
      await svc.exited;
    }
  });
});
