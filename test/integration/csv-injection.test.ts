// Spreadsheet formula injection: a visitor controls the Referer the redirect records, and every
// CSV the service writes neutralises a text cell that starts with = + - @ tab or CR (OWASP's rule:
// a leading single quote). The JSON answers carry the same values verbatim.
import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { insertScanEvents } from '../../server/analytics/synthetic-scans.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { fallbackDomain, makeCode, scanRow } from '../helpers/fixtures.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { hit } from './redirect-fixtures.js';

const HOSTILE = ['=webservice(a1)', '+cmd', '-2+3', '@sum(1+1)', '\t=1+1', '\r=1+1'];

describe('CSV exports neutralise formulas', function () {
  this.timeout(60_000);
  let svc: TestService;
  let rd: RedirectListener;
  let a: TestOrg;
  let code: { id: number; ulid: string };

  before(async () => {
    svc = await startTestService();
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50 });
    a = await svc.createOrg({ plan: 'enterprise_monthly', slug: 'sheets' });
    code = await makeCode(svc.app, a.org, { slug: 'menu', domain: await fallbackDomain(svc.app) });
    // The reproduction: an anonymous scanner sends a Referer whose host is a formula.
    const scan = await hit(rd.port, 'localhost:3001', '/sheets/menu', {
      headers: { Referer: 'http://=webservice(a1)/', 'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64)' },
    });
    expect(scan.status).to.equal(302);
    await rd.scans.flush();
    // Referrers a browser would not send, as they might reach the table another way.
    const now = Date.now();
    await insertScanEvents(
      svc.app.ch,
      HOSTILE.slice(1).map((referrer, i) =>
        scanRow(now - i - 1000, {
          scan_id: ulid(now - i),
          org_id: a.org.id,
          code_id: code.id,
          visitor_hash: String(77 + i),
          device_type: 'desktop',
          referrer,
        }),
      ),
    );
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
  });

  const csv = async (path: string) => {
    const res = await svc.get(path, a.token, { Accept: 'text/csv' });
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    return parse(res.text, { columns: true, relax_quotes: true }) as Record<string, string>[];
  };

  it('prefixes formula-like referrers with a quote in the analytics export CSV, and keeps JSON verbatim', async () => {
    const rows = await csv('/v1/analytics/export?range=7&dimension=referrer');
    const referrers = rows.map((r) => r.referrer);
    expect(referrers).to.include.members(HOSTILE.map((h) => `'${h}`));
    for (const r of referrers) expect(r).not.to.match(/^[=+\-@\t\r]/);
    const json = await svc.get('/v1/analytics/export?range=7&dimension=referrer', a.token);
    expect(json.body.data.csv_rows.map((r: { referrer: string }) => r.referrer)).to.include.members(HOSTILE);
  });

  it('does the same in the raw export CSV', async () => {
    const rows = await csv(`/v1/analytics/qr-codes/${code.ulid}/raw-export?range=7`);
    expect(rows.map((r) => r.referrer).sort()).to.deep.equal(HOSTILE.map((h) => `'${h}`).sort());
    const json = await svc.get(`/v1/analytics/qr-codes/${code.ulid}/raw-export?range=7`, a.token);
    expect(json.body.data.rows.map((r: { referrer: string }) => r.referrer).sort()).to.deep.equal([...HOSTILE].sort());
  });

  it('writes a bulk import’s error report as CSV through the same rule', async () => {
    const staged = await svc.post('/v1/qr-codes/bulk', a.token, {
      rows: [
        { slug: 'ok-1', destination: 'https://example.com/1' },
        { slug: '-bad slug', destination: 'ftp://x' },
      ],
      defaults: { domain_ulid: (await fallbackDomain(svc.app)).ulid },
    });
    expect(staged.status, staged.text).to.equal(201);
    const rows = await csv(`/v1/qr-codes/bulk/${staged.body.data.ulid}/errors`);
    const json = (await svc.get(`/v1/qr-codes/bulk/${staged.body.data.ulid}/errors`, a.token)).body.data;
    expect(rows).to.deep.equal(
      json.map((e: { row: number; field: string; message: string }) => ({ ...e, row: String(e.row) })),
    );
    expect(rows.map((r) => r.field)).to.include.members(['slug', 'destination']);
  });
});
