// Integers in query strings and paths are decimal digits, everywhere: `0x7`, ` 7` (%207), `7.0`,
// `7e0` and `+7` are refused with a 422 that says what is accepted, never read as 7.
import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { callTool } from './mcp-helpers.js';

const NOT_DECIMAL = ['0x7', '%207', '7.0', '7e0', '%2B7'];

describe('integers are decimal digits only', function () {
  this.timeout(60_000);
  let svc: TestService;
  let a: TestOrg;
  let codeUlid: string;

  before(async () => {
    svc = await startTestService({ config: { rawExportRateLimitPerMin: 1000 } });
    a = await svc.createOrg({ plan: 'enterprise_monthly' });
    const domain = (await svc.get('/v1/domains', a.token)).body.data[0].ulid;
    const code = await svc.post('/v1/qr-codes', a.token, {
      slug: 'n',
      destination: 'https://example.com/',
      domain_ulid: domain,
    });
    codeUlid = code.body.data.ulid;
  });
  after(() => svc?.close());

  // [path with {n} where the integer goes, field, a decimal value that is accepted]
  const places: [string, string, string][] = [
    ['/v1/analytics?range={n}', 'range', '7'],
    ['/v1/analytics/export?range={n}', 'range', '7'],
    ['/v1/qr-codes?limit={n}', 'limit', '7'],
    ['/v1/brands?limit={n}', 'limit', '7'],
    ['/v1/wallet?page={n}&per_page=7', 'page', '1'],
    ['/v1/wallet?per_page={n}', 'per_page', '7'],
    ['/v1/analytics/qr-codes/CODE/raw-export?limit={n}', 'limit', '7'],
    ['/v1/analytics/qr-codes/CODE/raw-export?offset={n}', 'offset', '7'],
  ];
  for (const [template, field, good] of places) {
    it(`refuses ${field} written other than in decimal digits in ${template.split('?')[0]}`, async () => {
      const at = (n: string) => template.replace('{n}', n).replace('CODE', codeUlid);
      expect((await svc.get(at(good), a.token)).status, `${field}=${good}`).to.equal(200);
      for (const n of NOT_DECIMAL) {
        const res = await svc.get(at(n), a.token);
        expect(res.status, `${field}=${n}`).to.equal(422);
        expect(res.body.errors[field].join(' '), `${field}=${n}`).to.match(/decimal digits/);
      }
    });
  }

  it('names the accepted values for an enumerated integer', async () => {
    const res = await svc.get('/v1/analytics?range=0x7', a.token);
    expect(res.body.errors.range).to.include('Must be one of: 7, 30, 90.');
  });

  it('refuses a token id in the path written other than in decimal digits', async () => {
    const id = (await svc.get('/v1/tokens', a.token)).body.data[0].id;
    for (const n of [`0x${id.toString(16)}`, `${id}.0`, `%20${id}`]) {
      const res = await svc.delete(`/v1/tokens/${n}`, a.token);
      expect(res.status, n).to.equal(422);
      expect(res.body.errors).to.have.property('token_id');
    }
    expect((await svc.get('/v1/status', a.token)).status).to.equal(200);
  });

  it('refuses such integers in tool arguments too', async () => {
    const token = await svc.createToken(a.org);
    const answer = await callTool(svc, token, 'analytics_read', { range: '0x7' });
    expect(answer.isError).to.equal(true);
    expect(answer.payload.errors.range.join(' ')).to.match(/decimal digits/);
    expect((await callTool(svc, token, 'analytics_read', { range: '7' })).isError).to.equal(false);
  });
});
