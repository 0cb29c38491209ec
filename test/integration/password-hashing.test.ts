// Code passwords are hashed once, when codes are written: an MCP bulk preview validates every row
// without hashing.
import { expect } from 'chai';
import { verifyPassword } from '../../server/qr-codes/password.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { callTool } from './mcp-helpers.js';

describe('password hashing of bulk-created codes', function () {
  this.timeout(120_000);
  let svc: TestService;
  let a: TestOrg;
  let fallbackUlid: string;

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg({ plan: 'professional_monthly', slug: 'hashing' });
    fallbackUlid = (await svc.get('/v1/domains', a.token)).body.data.find((d: any) => d.type === 'fallback').ulid;
  });
  after(() => svc?.close());

  const hashes = async () => (await svc.app.metrics.passwordHashes.get()).values[0]?.value ?? 0;
  const rows = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      slug: `${prefix}-${i}`,
      destination: `https://example.com/${prefix}/${i}`,
      domain_ulid: fallbackUlid,
      password: `secret-${i}`,
    }));

  it('previews codes_bulk_create without hashing, then hashes each password once on execution', async () => {
    const args = { rows: rows('mcp', 12) };
    const before = await hashes();
    const preview = await callTool(svc, a.token, 'codes_bulk_create', args);
    expect(preview.isError, JSON.stringify(preview.payload)).to.equal(false);
    expect(preview.payload.requires_confirmation).to.equal(true);
    expect(await hashes()).to.equal(before);
    expect(await svc.app.db('qr_codes').where('slug', 'like', 'hashing/mcp-%').select('id')).to.have.length(0);

    const done = await callTool(svc, a.token, 'codes_bulk_create', {
      ...args,
      confirm: true,
      confirmation_id: preview.payload.confirmation_id,
    });
    expect(done.isError, JSON.stringify(done.payload)).to.equal(false);
    expect(await hashes()).to.equal(before + 12);
    const stored = await svc.app.db('qr_codes').where({ slug: 'hashing/mcp-3' }).first('password_hash');
    expect(await verifyPassword('secret-3', stored.password_hash)).to.equal(true);
  });
});
