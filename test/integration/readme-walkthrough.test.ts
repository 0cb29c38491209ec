// The README's walkthrough, run as written: every ```sh walkthrough block, in order, in one bash
// session against a service started on a fresh data directory, each answer checked. The one change
// is the API address of the first block (the test's service listens on a free port, not 3000).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { decodeQr } from '../helpers/qr-decode.js';
import { waitFor } from '../helpers/poll.js';
import { embeddedServiceEnv } from '../helpers/service-process.js';

const README_API = 'API=http://127.0.0.1:3000';
/** What a user's directory needs for `npx qrctl`: the package (its bin) and its dependencies. */
const PACKAGE_ENTRIES = ['package.json', 'node_modules', 'bin'];

export function walkthroughBlocks(readme: string): string[] {
  return [...readme.matchAll(/^```sh walkthrough\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** A bash session fed one block at a time; each run returns what the block printed. */
class Shell {
  private out = '';
  private waiting: { marker: string; resolve: (text: string) => void } | null = null;
  private runs = 0;
  constructor(private readonly bash: ChildProcessWithoutNullStreams) {
    const onData = (c: Buffer) => {
      this.out += c.toString();
      const w = this.waiting;
      const at = w ? this.out.indexOf(w.marker) : -1;
      if (w && at >= 0) {
        const text = this.out.slice(0, at);
        this.out = this.out.slice(at + w.marker.length);
        this.waiting = null;
        w.resolve(text);
      }
    };
    bash.stdout.on('data', onData);
    bash.stderr.on('data', (c: Buffer) => (this.out += c.toString().replace(/^npm warn .*\n/gm, '')));
  }

  run(block: string): Promise<string> {
    const marker = `@@walkthrough-${++this.runs}@@\n`;
    return new Promise((resolve) => {
      this.waiting = { marker, resolve };
      this.bash.stdin.write(`${block}\necho '${marker.trim()}'\n`);
    });
  }
}

describe('the README walkthrough, run verbatim', function () {
  this.timeout(300_000);
  let server: ChildProcessWithoutNullStreams | undefined;
  let bash: ChildProcessWithoutNullStreams | undefined;
  // The blocks run in a directory of the test's own that stands for the user's checkout (links to
  // the package, its bin and its dependencies), so the files they write never land in the repository.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-walkthrough-'));
  for (const entry of PACKAGE_ENTRIES) fs.symlinkSync(path.resolve(entry), path.join(dir, entry));

  after(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    bash?.kill();
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.on('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
  });

  it('creates an organization, finds a domain, creates a code, scans it, reads analytics and does it again through MCP', async () => {
    const blocks = walkthroughBlocks(fs.readFileSync('README.md', 'utf8'));
    expect(blocks.length).to.equal(8);
    expect(blocks[0]).to.include(README_API);

    const { env, apiPort, redirectPort } = await embeddedServiceEnv('readme-var', { LOG_LEVEL: 'warn' });
    server = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let log = '';
    server.stdout.on('data', (c: Buffer) => (log += c.toString()));
    server.stderr.on('data', (c: Buffer) => (log += c.toString()));
    const api = `http://127.0.0.1:${apiPort}`;
    await waitFor(
      async () => {
        if (server!.exitCode !== null) expect.fail(`the service exited before it was ready:\n${log}`);
        return fetch(`${api}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        );
      },
      Boolean,
      120_000,
      500,
    ).catch((err: Error) => expect.fail(`the service did not become ready (${err.message}):\n${log}`));

    bash = spawn('bash', ['--noprofile', '--norc'], { env, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    const sh = new Shell(bash);
    const [setup, org, domains, create, scan, analytics, image, mcp] = blocks;

    expect(await sh.run(setup.replace(README_API, `API=${api}`))).to.equal('');

    const [signIn, ...statusLines] = (await sh.run(org)).trim().split('\n');
    expect(signIn).to.match(/^Dashboard sign-in link: http:\/\/127\.0\.0\.1:\d+\/app\/\S+$/);
    const status = JSON.parse(statusLines.join('\n'));
    expect(status).to.include({ status: 'ok', version: 'v1' });
    expect(status.organization.slug).to.equal('acme');

    const list = JSON.parse(await sh.run(domains));
    expect(list.data[0]).to.include({ type: 'fallback', is_shared: true });

    const code = JSON.parse(await sh.run(create)).data;
    expect(code).to.include({ slug: 'acme/menu', public_url: `http://localhost:${redirectPort}/acme/menu` });

    expect((await sh.run(scan)).trim().split('\n')).to.deep.equal([
      '302 https://example.com/menu',
      '302 https://example.com/menu',
    ]);

    // Scans are flushed to ClickHouse within a few seconds; as the README says, run it again if not yet.
    let counted = '';
    for (let i = 0; i < 15; i++) {
      counted = await sh.run(analytics);
      if (/scans: 2/.test(counted)) break;
    }
    const [redirects, ...rest] = counted.trim().split('\n');
    expect(redirects).to.equal('2');
    const payload = JSON.parse(rest[0]).data;
    expect(payload.qr_code).to.deep.equal({ ulid: code.ulid, name: null, slug: 'acme/menu' });
    expect(payload.totals.scans).to.equal(1);
    expect(payload.dimension_breakdown).to.deep.equal([{ key: 'mobile', label: 'Mobile', scans: 1, uniques: 1 }]);
    expect(rest.slice(1).join(' ')).to.match(/\{ scans: 2, uniques: 2, unique_rate: 1 \}/);

    // The image files land in the current directory (the test's own here).
    expect((await sh.run(image)).trim().split('\n')).to.deep.equal(['200 image/svg+xml', '200 image/png']);
    expect(await decodeQr(fs.readFileSync(path.join(dir, 'menu.png')))).to.equal(code.public_url);
    expect(await decodeQr(fs.readFileSync(path.join(dir, 'menu.svg')), 512)).to.equal(code.public_url);

    const [tools, created, ...read] = (await sh.run(mcp)).trim().split('\n');
    expect(tools.split(' ')).to.have.length(25).and.to.include.members(['codes_create', 'analytics_code_read']);
    expect(JSON.parse(created).data).to.include({ slug: 'acme/flyer' });
    expect(JSON.parse(read.join('\n')).data.totals.scans).to.equal(2);
  });
});
