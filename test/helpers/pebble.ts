// A real ACME server on loopback: Debian's pebble, installed with apt-get when missing (the test
// process runs as root in CI), started on free ports with its own config file. Its DNS questions go to
// the test DNS server (-dnsserver), and its HTTP-01 validations to `httpPort` on the address that
// server answers (the redirect listener under test). Validation is real: the always-valid switch is
// never set. The CA's root and intermediate (new on every start) come from the management interface.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureDebianBinary } from './debian.js';
import { waitFor } from './poll.js';
import { createTestCa } from './test-certs.js';

export interface Pebble {
  directoryUrl: string;
  /** The CA that signed pebble's own HTTPS listener (what ACME_CA_FILE points at). */
  listenerCaPem: string;
  listenerCaFile: string;
  /** Pebble's issuing root and intermediate, to verify the certificates it issues. */
  rootPem: string;
  intermediatePem: string;
  /** Pebble's output so far, for failure messages. */
  output(): string;
  close(): Promise<void>;
  /**
   * Stops pebble and starts it again on the same addresses (the same directory URL and listener
   * certificate) with a fresh state, as a reset staging server is: no accounts, a new CA.
   */
  restart(): Promise<void>;
}

export interface PebbleOptions {
  /** Port the validation authority connects to for HTTP-01 (the redirect listener's port). */
  httpPort: number;
  /** `127.0.0.1:<port>` of the DNS server pebble asks. */
  dnsServer: string;
}

/** The pebble binary, installed from Debian's archive when missing. */
function ensurePebble(): string {
  return ensureDebianBinary('pebble', 'pebble');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function get(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

export async function startPebble(opts: PebbleOptions): Promise<Pebble> {
  const binary = ensurePebble();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qr-pebble-'));
  const ca = await createTestCa('pebble listener test CA');
  const leaf = await ca.issue({ dns: ['localhost'], ip: ['127.0.0.1'] });
  const file = (name: string, body: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, body);
    return p;
  };
  const listenerCaFile = file('listener-ca.pem', ca.certPem);
  const [acmePort, managementPort, tlsPort] = [await freePort(), await freePort(), await freePort()];
  const config = file(
    'pebble-config.json',
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: file('listener.pem', leaf.certPem),
        privateKey: file('listener-key.pem', leaf.keyPem),
        httpPort: opts.httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    }),
  );
  let output = '';
  let child: ChildProcess;
  let exited: Promise<void>;
  const spawnPebble = () => {
    child = spawn(binary, ['-config', config, '-dnsserver', opts.dnsServer], {
      env: {
        PATH: process.env.PATH,
        // Validate at once instead of after a random pause of up to 5 s; accept every good nonce; a
        // new order always needs its own challenge (no reuse of an earlier valid authorization).
        PEBBLE_VA_NOSLEEP: '1',
        PEBBLE_WFE_NONCEREJECT: '0',
        PEBBLE_AUTHZREUSE: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const proc = child;
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const close = async () => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };

  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const management = `https://127.0.0.1:${managementPort}`;
  /** Starts pebble and waits for its directory; its CA's root and intermediate. */
  const run = async (): Promise<{ rootPem: string; intermediatePem: string }> => {
    spawnPebble();
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`pebble exited at start (${child.exitCode}):\n${output}`);
          return get(directoryUrl, ca.certPem).then(
            (r) => r.status === 200,
            () => false,
          );
        },
        Boolean,
        20_000,
        100,
      );
    } catch (err) {
      await close();
      if (child.exitCode !== null) throw err;
      throw new Error(`pebble did not answer ${directoryUrl} within 20 s:\n${output}`, { cause: err });
    }
    const root = await get(`${management}/roots/0`, ca.certPem);
    const intermediate = await get(`${management}/intermediates/0`, ca.certPem);
    if (root.status !== 200 || intermediate.status !== 200) {
      await close();
      throw new Error(`pebble's management interface did not give its root and intermediate:\n${output}`);
    }
    return { rootPem: root.body, intermediatePem: intermediate.body };
  };
  const first = await run();
  const pebble: Pebble = {
    directoryUrl,
    listenerCaPem: ca.certPem,
    listenerCaFile,
    ...first,
    output: () => output,
    close,
    restart: async () => {
      await stop();
      Object.assign(pebble, await run());
    },
  };
  return pebble;
}
