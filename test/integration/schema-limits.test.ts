// A value over a schema limit is refused whole, over REST and as a tool call alike, with a 422 in
// the documented error shape that names the field and the limit; nothing is created.
import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { toolError } from './mcp-helpers.js';

describe('schema limits over REST and MCP', function () {
  this.timeout(60_000);
  let svc: TestService;
  let a: TestOrg;
  let domain: string;

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg({ plan: 'enterprise_monthly' });
    domain = (await svc.get('/v1/domains', a.token)).body.data[0].ulid;
  });
  after(() => svc?.close());

  const over = () => ({
    slug: 'limits',
    destination: 'https://example.com/',
    domain_ulid: domain,
    name: 'n'.repeat(256),
    utm_params: { ['k'.repeat(65)]: 'v' },
  });

  it('refuses a code whose name and UTM key are over their limits, naming them', async () => {
    const res = await svc.post('/v1/qr-codes', a.token, over());
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('validation_failed');
    expect(res.body.errors.name.join(' ')).to.match(/\b255\b/);
    expect(Object.keys(res.body.errors).some((k) => k.startsWith('utm_params'))).to.equal(true);
    expect((await svc.get('/v1/qr-codes', a.token)).body.data).to.have.length(0);
  });

  it('refuses the same arguments as a tool call, with the same errors', async () => {
    const token = await svc.createToken(a.org);
    const rest = (await svc.post('/v1/qr-codes', a.token, over())).body.errors;
    const payload = await toolError(svc, token, 'codes_create', over());
    expect(payload.code).to.equal('validation_failed');
    expect(payload.errors).to.deep.equal(rest);
  });

  it('refuses a bulk import of more rows than the schema allows before reading them', async () => {
    const rows = Array.from({ length: 100_001 }, () => ({}));
    const res = await svc.post('/v1/qr-codes/bulk', a.token, { rows });
    expect(res.status).to.equal(422);
    expect(res.body.errors.rows.join(' ')).to.match(/100000|100,000/);
  });
});
