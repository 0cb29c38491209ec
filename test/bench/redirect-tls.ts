// make bench-redirect-tls: the HTTPS redirect (a custom domain's certificate chosen by SNI from
// Postgres, cached) beside the plain-HTTP redirect and a bare node:https server answering the same
// 302 with the same certificate, in one run:
//   - keep-alive connections (autocannon): steady state, one handshake per connection;
//   - a new connection per request, full TLS handshake every time;
//   - a new connection per request resuming the previous session (TLS 1.3 session tickets).
// The server processes are children (one core each at most); the load comes from this process.
// Goal: on par with the bare server on handshakes (HANDSHAKE_GOAL), every answer a 302; exits
// non-zero when it is missed.
//   BENCH_DURATION=5 BENCH_CONNECTIONS=50 BENCH_HANDSHAKERS=8 make bench-redirect-tls
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import autocannon from 'autocannon';
import { createLogger } from '../../server/logger.js';
import { startEmbeddedPostgres } from '../../server/stores/postgres.js';
import { createTestCa } from '../helpers/test-certs.js';
import { exitIfGoalsMissed, machine, startChild, stopChild, table, type Figures } from './lib.js';

const duration = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const handshakers = Number(process.env.BENCH_HANDSHAKERS ?? 8);
const HOST = 'go.bench-tls.test';
/** On par with a bare node:https server on new connections: the redirect's full handshakes per second at least this share of its. */
const HANDSHAKE_GOAL = 0.9;
const REQUEST = `GET /go HTTP/1.1\r\nHost: ${HOST}\r\nUser-Agent: bench\r\nConnection: close\r\n\r\n`;

async function keepAlive(label: string, url: string, seconds: number): Promise<Figures> {
  const r = await autocannon({ url, connections, duration: seconds, servername: HOST, headers: { Host: HOST } });
  return {
    label,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx - r['3xx'],
    requests: r.requests.total,
  };
}

interface Once {
  status: number;
  ms: number;
  resumed: boolean;
  session: Buffer | null;
}

/** One request on a new connection (TLS when `secure`, offering `session` to resume). */
function once(port: number, secure: boolean, session: Buffer | null): Promise<Once> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let newSession: Buffer | null = null;
    let resumed = false;
    let data = '';
    const socket: net.Socket = secure
      ? tls.connect({
          host: '127.0.0.1',
          port,
          servername: HOST,
          rejectUnauthorized: false,
          session: session ?? undefined,
        })
      : net.connect({ host: '127.0.0.1', port });
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      // Known only until the socket closes.
      if (secure) resumed = (socket as tls.TLSSocket).isSessionReused();
      socket.write(REQUEST);
    });
    if (secure) (socket as tls.TLSSocket).on('session', (s: Buffer) => (newSession = s));
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (data += c));
    socket.on('error', reject);
    socket.on('close', () =>
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0),
        ms: performance.now() - t0,
        resumed,
        session: newSession,
      }),
    );
  });
}

/** `handshakers` loops, each a new connection per request, for `seconds`. */
async function perRequest(
  label: string,
  port: number,
  mode: 'plain' | 'full' | 'resumed',
  seconds: number,
): Promise<Figures & { resumedShare: number }> {
  const end = Date.now() + seconds * 1000;
  const times: number[] = [];
  let non302 = 0;
  let resumed = 0;
  await Promise.all(
    Array.from({ length: handshakers }, async () => {
      let session: Buffer | null = null;
      while (Date.now() < end) {
        const r = await once(port, mode !== 'plain', mode === 'resumed' ? session : null);
        times.push(r.ms);
        if (r.status !== 302) non302++;
        if (r.resumed) resumed++;
        if (r.session) session = r.session;
      }
    }),
  );
  times.sort((x, y) => x - y);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] ?? 0;
  return {
    label,
    rps: Math.round(times.length / seconds),
    p50: pct(50),
    p99: pct(99),
    non2xx: non302,
    requests: times.length,
    resumedShare: times.length ? resumed / times.length : 0,
  };
}

const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-tls-'));
await fs.chmod(root, 0o755);
const ca = await createTestCa('bench CA');
const leaf = await ca.issue({ dns: [HOST, 'localhost'] }, 90);
const certFile = path.join(root, 'cert.pem');
const keyFile = path.join(root, 'key.pem');
await fs.writeFile(certFile, leaf.certPem);
await fs.writeFile(keyFile, leaf.keyPem, { mode: 0o600 });
const pg = await startEmbeddedPostgres({ dataDir: root, port: 0, database: 'qr', log: createLogger('silent') });
const certEnv = { BENCH_CERT_FILE: certFile, BENCH_KEY_FILE: keyFile, BENCH_HOST: HOST };
const baseline = await startChild(process.execPath, ['--import', 'tsx', 'test/bench/https-baseline.ts'], certEnv);
const service = await startChild(
  process.execPath,
  ['--import', 'tsx', 'test/bench/redirect-tls-server.ts'],
  { ...certEnv, DATABASE_URL: pg.url, DATA_DIR: path.join(root, 'svc'), LOG_LEVEL: 'warn' },
  /LISTENING (\d+) (\d+)/,
);
const tlsPort = Number(service.match[2]);

/** The goals missed: the process then exits non-zero. */
const missed: string[] = [];
try {
  const plainUrl = `http://127.0.0.1:${service.port}/go`;
  const httpsUrl = `https://127.0.0.1:${tlsPort}/go`;
  const bareUrl = `https://127.0.0.1:${baseline.port}/go`;
  // Warm up (JIT, caches, pools, the certificate cache), then measure.
  for (const url of [plainUrl.replace('/go', '/warm'), httpsUrl.replace('/go', '/warm'), bareUrl]) {
    await keepAlive('warmup', url, 1);
  }
  await perRequest('warmup', tlsPort, 'resumed', 1);
  const rows = [
    await keepAlive('plain-HTTP redirect, keep-alive', plainUrl, duration),
    await keepAlive('bare node:https 302, keep-alive', bareUrl, duration),
    await keepAlive('HTTPS redirect, keep-alive', httpsUrl, duration),
    await perRequest('plain-HTTP redirect, new connection each', service.port, 'plain', duration),
    await perRequest('bare node:https, new TLS each, full handshake', baseline.port, 'full', duration),
    await perRequest('HTTPS redirect, new TLS each, full handshake', tlsPort, 'full', duration),
    await perRequest('bare node:https, new TLS each, resumed', baseline.port, 'resumed', duration),
    await perRequest('HTTPS redirect, new TLS each, resumed', tlsPort, 'resumed', duration),
  ];
  process.stdout.write(
    `\nbench-redirect-tls  machine: ${machine()}  load average: ${os.loadavg()[0].toFixed(1)}  ` +
      `keep-alive connections: ${connections}  new-connection loops: ${handshakers}  duration: ${duration}s each\n` +
      `certificate: ECDSA P-256, ${HOST} (SNI); TLS 1.3; scans recorded to embedded ClickHouse as in production\n\n`,
  );
  process.stdout.write(table(rows) + '\n\n');
  const byLabel = (l: string) => rows.find((r) => r.label.startsWith(l))!;
  const ratio = (a: Figures, b: Figures) => `${((a.rps / b.rps) * 100).toFixed(0)}%`;
  const resumedRows = rows.filter((r) => 'resumedShare' in r && r.label.includes('resumed')) as (Figures & {
    resumedShare: number;
  })[];
  process.stdout.write(
    `HTTPS redirect vs bare node:https: keep-alive ${ratio(byLabel('HTTPS redirect, keep-alive'), byLabel('bare node:https 302, keep-alive'))}, ` +
      `full handshake ${ratio(byLabel('HTTPS redirect, new TLS each, full'), byLabel('bare node:https, new TLS each, full'))}, ` +
      `resumed ${ratio(byLabel('HTTPS redirect, new TLS each, resumed'), byLabel('bare node:https, new TLS each, resumed'))}\n` +
      `HTTPS redirect vs plain-HTTP redirect: keep-alive ${ratio(byLabel('HTTPS redirect, keep-alive'), byLabel('plain-HTTP redirect, keep-alive'))}, ` +
      `new connection each (resumed) ${ratio(byLabel('HTTPS redirect, new TLS each, resumed'), byLabel('plain-HTTP redirect, new connection'))}\n` +
      `sessions actually resumed: ${resumedRows.map((r) => `${r.label.split(',')[0]} ${(r.resumedShare * 100).toFixed(0)}%`).join(', ')}\n`,
  );
  if (rows.some((r) => r.non2xx)) process.stdout.write('WARNING: answers other than 302 during the run\n');
  const handshakes =
    byLabel('HTTPS redirect, new TLS each, full').rps / byLabel('bare node:https, new TLS each, full').rps;
  process.stdout.write(
    `goal full handshakes >= ${HANDSHAKE_GOAL * 100}% of the bare server (on par): ${(handshakes * 100).toFixed(0)}% ` +
      `${handshakes >= HANDSHAKE_GOAL ? 'met' : 'NOT met'}\n`,
  );
  if (handshakes < HANDSHAKE_GOAL) missed.push(`full handshakes < ${HANDSHAKE_GOAL * 100}% of the bare server`);
  if (rows.some((r) => r.non2xx)) missed.push('answers other than 302');
} finally {
  await stopChild(baseline.child);
  await stopChild(service.child);
  await pg.stop();
  await fs.rm(root, { recursive: true, force: true });
}
exitIfGoalsMissed(missed);
