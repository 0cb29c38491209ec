import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Runner } from 'graphile-worker';
import { importProgressLine } from '../../server/cli/commands.js';
import { startWorker } from '../../workers/index.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { runQrctl } from '../helpers/web-client.js';

// qrctl import: the same import as POST /v1/imports, run by the service's worker, followed with a
// progress bar on a terminal and plain progress lines otherwise.
describe('qrctl import', () => {
  let svc: TestService;
  let worker: Runner;
  let dir: string;
  let a: TestOrg;
  let b: TestOrg;
  let bitlyCsv: string;
  const created = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 19).replace('T', ' ');

  before(async () => {
    svc = await startTestService();
    worker = await startWorker(svc.app);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'qrctl-import-'));
    a = await svc.createOrg({ plan: 'business_monthly', slug: 'clia' });
    b = await svc.createOrg({ plan: 'business_monthly', slug: 'clib' });
    bitlyCsv = path.join(dir, 'bitly.csv');
    const rows = Array.from(
      { length: 40 },
      (_, i) => `Link ${i},bit.ly/cli${i},https://example.com/${i},${created},${i % 4 === 0 ? 3 : 0}`,
    );
    await fs.writeFile(bitlyCsv, ['Title,Bitlink,Long URL,Date Created,Clicks', ...rows].join('\n'));
  });
  after(async () => {
    await worker?.stop();
    await svc?.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const cli = (live: boolean, ...argv: string[]) => runQrctl(svc.app, argv, { live });

  it('with --yes previews, confirms and runs the import, printing plain progress lines when not on a terminal', async () => {
    const r = await cli(false, 'import', '--org', 'clia', '--source', 'bitly', '--file', bitlyCsv, '--yes', '--json');
    expect(r.code, r.err).to.equal(0);
    const body = JSON.parse(r.out);
    expect(body.status).to.equal('completed');
    expect(body.progress).to.deep.include({ links_total: 40, links_created: 40, scans_total: 30, scans_done: 30 });
    expect(r.progress[0]).to.match(/^previewing /);
    const last = r.progress[r.progress.length - 1];
    expect(last).to.match(/^\[#{20}\] 100% completed · links 40\/40 · scans 30\/30$/);
    // One line per status and per tenth at most, never a blank line.
    expect(r.progress.length).to.be.at.most(1 + 3 * 11);
    expect(r.progress.every(Boolean)).to.equal(true);
    expect(new Set(r.progress).size).to.equal(r.progress.length);
    const codes = await svc.app.db('qr_codes').where({ org_id: a.org.id }).whereNull('deleted_at');
    expect(codes).to.have.length(40);
  });

  it('without --yes stops at the preview with the command that confirms; import confirm then runs it, its bar redrawn on a terminal and ended', async () => {
    const r = await cli(false, 'import', '--org', 'clib', '--source', 'bitly', '--file', bitlyCsv, '--json');
    expect(r.code, r.err).to.equal(0);
    const staged = JSON.parse(r.out);
    expect(staged.status).to.equal('staged');
    expect(staged.preview.counts).to.deep.include({ links: 40, new: 40 });
    expect(staged.next).to.equal(
      `qrctl import confirm ${staged.import} --org clib --confirm-token ${staged.confirm_token}`,
    );
    expect(await svc.app.db('qr_codes').where({ org_id: b.org.id })).to.have.length(0);

    // Another organization's import is not found, and a wrong token is refused: nothing runs.
    const other = await cli(
      false,
      'import',
      'confirm',
      staged.import,
      '--org',
      'clia',
      '--confirm-token',
      staged.confirm_token,
    );
    expect(other.code).to.equal(2);
    expect(other.err).to.match(/not found/i);
    const wrong = await cli(false, 'import', 'confirm', staged.import, '--org', 'clib', '--confirm-token', 'nope');
    expect(wrong.code).to.equal(2);
    expect(wrong.err).to.match(/confirm-token/);

    const done = await cli(
      true,
      'import',
      'confirm',
      staged.import,
      '--org',
      'clib',
      '--confirm-token',
      staged.confirm_token,
      '--json',
    );
    expect(done.code, done.err).to.equal(0);
    expect(JSON.parse(done.out).progress).to.deep.include({ links_created: 40, scans_done: 30 });
    expect(done.progress[done.progress.length - 1]).to.equal(''); // the terminal's status line ended
    expect(done.progress[done.progress.length - 2]).to.match(/100% completed/);
  });

  it('a failed import exits 1 with the source’s reason; bad arguments exit 2', async () => {
    const broken = path.join(dir, 'broken.csv');
    await fs.writeFile(broken, 'long_url,short_code\n"https://x.com,abc\n');
    const r = await cli(false, 'import', '--org', 'clia', '--source', 'csv', '--file', broken, '--yes');
    expect(r.code).to.equal(1);
    expect(r.err).to.match(/failed: The CSV file is malformed/);

    expect((await cli(false, 'import', '--org', 'clia', '--source', 'nope', '--file', broken)).code).to.equal(2);
    const missing = await cli(
      false,
      'import',
      '--org',
      'clia',
      '--source',
      'csv',
      '--file',
      path.join(dir, 'none.csv'),
    );
    expect(missing.code).to.equal(2);
    expect(missing.err).to.match(/--file .*none\.csv/);
    const noToken = await cli(false, 'import', '--org', 'clia', '--source', 'dub');
    expect(noToken.code).to.equal(2);
    expect(noToken.err).to.match(/credentials-token|credentials\.token/);
  });

  it('draws one line of bar, status, links, scans and ETA', () => {
    const line = importProgressLine({
      ulid: '01J0000000000000000000000A',
      status: 'running',
      progress: {
        percent: 42,
        links_done: 4200,
        links_total: 10000,
        scans_done: 12,
        scans_total: 1_000_000,
        eta_seconds: 95,
      },
    } as Parameters<typeof importProgressLine>[0]);
    expect(line).to.equal('[########............] 42% running · links 4,200/10,000 · scans 12/1,000,000 · ETA 1m35s');
  });
});
