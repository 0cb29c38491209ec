import { expect } from 'chai';
import type { OrgRecord } from '../../server/auth/principal.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { CONFIRMATION_TTL_SECONDS } from '../../server/mcp/confirmations.js';
import { callTool, toolError, toolOk } from './mcp-helpers.js';

describe('MCP guarded tools: confirm then execute', () => {
  let svc: TestService;
  let token: string;
  let orgId: number;
  let orgSlug: string;
  let org: OrgRecord;
  let domain: string;
  let n = 0;

  async function newCode(): Promise<string> {
    const created = await toolOk(svc, token, 'codes_create', {
      slug: `c${++n}`,
      destination: 'https://example.com/' + n,
      domain_ulid: domain,
    });
    return created.data.ulid;
  }

  async function liveCodes(): Promise<number> {
    const row = await svc.app
      .db('qr_codes')
      .where({ org_id: orgId })
      .whereNull('deleted_at')
      .count<{ count: number }[]>('* as count');
    return Number(row[0].count);
  }

  const rows = (count: number, prefix: string) =>
    Array.from({ length: count }, (_, i) => ({
      slug: `${prefix}-${i}`,
      destination: `https://example.com/${prefix}/${i}`,
      domain_ulid: domain,
    }));

  before(async () => {
    svc = await startTestService({ config: { platformRateLimitPerMin: 100_000 } });
    const created = await svc.createOrg({ plan: 'business_monthly', balanceMinor: 10_000 });
    token = created.token;
    org = created.org;
    orgId = created.org.id;
    orgSlug = created.org.slug;
    domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
  });
  afterEach(() => svc.clock.reset());
  after(() => svc.close());

  it('previews a delete without deleting, then deletes with confirm and the confirmation_id', async () => {
    svc.clock.set('2026-03-10T12:00:00.000Z');
    const code = await newCode();
    const before = await liveCodes();
    const preview = await toolOk(svc, token, 'codes_delete', { code_ulid: code });
    expect(preview.requires_confirmation).to.equal(true);
    expect(preview.confirmation_id).to.match(/^cnf_[A-Za-z0-9]{40}$/);
    expect(preview.expires_at).to.equal('2026-03-10T12:05:00.000Z');
    expect(preview.preview.action).to.equal('delete');
    expect(preview.preview.code).to.deep.equal((await svc.get(`/v1/qr-codes/${code}`, token)).body.data);
    expect(await liveCodes()).to.equal(before);

    const done = await toolOk(svc, token, 'codes_delete', {
      code_ulid: code,
      confirm: true,
      confirmation_id: preview.confirmation_id,
    });
    expect(done).to.deep.equal({ deleted: true, code_ulid: code });
    expect(await liveCodes()).to.equal(before - 1);
  });

  it('does not issue a confirmation for a code that does not exist', async () => {
    const err = await toolError(svc, token, 'codes_delete', { code_ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(err).to.deep.equal({ message: 'The QR code was not found.', code: 'not_found' });
    expect(
      await svc.app
        .db('mcp_confirmations')
        .where({ org_id: orgId, tool: 'codes_delete' })
        .count<{ count: number }[]>('* as count'),
    ).to.deep.equal([{ count: 1 }]);
  });

  it('refuses confirm: true without a confirmation_id', async () => {
    const code = await newCode();
    const err = await toolError(svc, token, 'codes_delete', { code_ulid: code, confirm: true });
    expect(err.code).to.equal('validation_failed');
    expect(err.errors).to.deep.equal({
      confirmation_id: ['confirm: true needs the confirmation_id returned by the preview call.'],
    });
    expect((await svc.get(`/v1/qr-codes/${code}`, token)).status).to.equal(200);
  });

  it('refuses changed arguments, and the confirmation still works with the previewed ones', async () => {
    const code = await newCode();
    const other = await newCode();
    const { confirmation_id } = await toolOk(svc, token, 'codes_delete', { code_ulid: code });
    const err = await toolError(svc, token, 'codes_delete', { code_ulid: other, confirm: true, confirmation_id });
    expect(err.errors.confirmation_id[0]).to.match(/^The arguments differ from the ones previewed/);
    expect((await svc.get(`/v1/qr-codes/${other}`, token)).status).to.equal(200);
    await toolOk(svc, token, 'codes_delete', { code_ulid: code, confirm: true, confirmation_id });
    expect((await svc.get(`/v1/qr-codes/${code}`, token)).status).to.equal(404);
  });

  it('refuses a confirmation from another token of the same organization', async () => {
    const code = await newCode();
    const { confirmation_id } = await toolOk(svc, token, 'codes_delete', { code_ulid: code });
    const second = await svc.createToken(org, { abilities: ['*'] });
    const err = await toolError(svc, second, 'codes_delete', { code_ulid: code, confirm: true, confirmation_id });
    expect(err.errors.confirmation_id).to.deep.equal([
      'This confirmation_id was issued to another token; only the token that asked for the preview can confirm it.',
    ]);
    expect((await svc.get(`/v1/qr-codes/${code}`, token)).status).to.equal(200);
  });

  it('answers a confirmation of another organization like an unknown one', async () => {
    const code = await newCode();
    const { confirmation_id } = await toolOk(svc, token, 'codes_delete', { code_ulid: code });
    const other = await svc.createOrg();
    const err = await toolError(svc, other.token, 'codes_delete', { code_ulid: code, confirm: true, confirmation_id });
    expect(err.errors.confirmation_id[0]).to.match(/^Unknown confirmation_id/);
    expect((await svc.get(`/v1/qr-codes/${code}`, token)).status).to.equal(200);
    const theirDomain = (await svc.get('/v1/domains', other.token)).body.data[0].ulid;
    const theirs = await toolOk(svc, other.token, 'codes_create', {
      slug: 'theirs',
      destination: 'https://example.com',
      domain_ulid: theirDomain,
    });
    const err2 = await toolError(svc, other.token, 'codes_delete', {
      code_ulid: theirs.data.ulid,
      confirm: true,
      confirmation_id,
    });
    expect(err2.errors.confirmation_id[0]).to.match(/^Unknown confirmation_id/);
    const err3 = await toolError(svc, token, 'codes_delete', {
      code_ulid: code,
      confirm: true,
      confirmation_id: 'cnf_' + 'x'.repeat(40),
    });
    expect(err3.errors.confirmation_id[0]).to.match(/^Unknown confirmation_id/);
  });

  it('refuses a confirmation issued for another tool', async () => {
    const code = await newCode();
    const { confirmation_id } = await toolOk(svc, token, 'codes_bulk_update_status', {
      code_ulids: [code],
      status: 'paused',
    });
    const err = await toolError(svc, token, 'codes_delete', { code_ulid: code, confirm: true, confirmation_id });
    expect(err.errors.confirmation_id).to.deep.equal([
      'This confirmation_id was issued for codes_bulk_update_status, not codes_delete.',
    ]);
    const survived = await svc.get(`/v1/qr-codes/${code}`, token);
    expect(survived.status).to.equal(200);
    expect(survived.body.data.status).to.equal('active'); // neither deleted nor paused
  });

  it('refuses a second use of a confirmation', async () => {
    const code = await newCode();
    const args = { code_ulids: [code], status: 'paused' };
    const { confirmation_id } = await toolOk(svc, token, 'codes_bulk_update_status', args);
    await toolOk(svc, token, 'codes_bulk_update_status', { ...args, confirm: true, confirmation_id });
    const err = await toolError(svc, token, 'codes_bulk_update_status', { ...args, confirm: true, confirmation_id });
    expect(err.errors.confirmation_id).to.deep.equal([
      'This confirmation_id has already been used; call the tool without confirm for a new preview.',
    ]);
  });

  it('lets exactly one of three concurrent confirmations through', async () => {
    const code = await newCode();
    const args = { code_ulids: [code], status: 'archived' };
    const { confirmation_id } = await toolOk(svc, token, 'codes_bulk_update_status', args);
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        callTool(svc, token, 'codes_bulk_update_status', { ...args, confirm: true, confirmation_id }),
      ),
    );
    expect(answers.map((a) => a.isError).sort()).to.deep.equal([false, true, true]);
    expect((await svc.get(`/v1/qr-codes/${code}`, token)).body.data.status).to.equal('archived');
  });

  it(`expires a confirmation ${CONFIRMATION_TTL_SECONDS} seconds after the preview`, async () => {
    svc.clock.set('2026-03-10T13:00:00.000Z');
    const code = await newCode();
    const { confirmation_id } = await toolOk(svc, token, 'codes_delete', { code_ulid: code });
    svc.clock.advance(CONFIRMATION_TTL_SECONDS * 1000);
    const err = await toolError(svc, token, 'codes_delete', { code_ulid: code, confirm: true, confirmation_id });
    expect(err.errors.confirmation_id[0]).to.match(/^This confirmation_id expired/);
    expect((await svc.get(`/v1/qr-codes/${code}`, token)).status).to.equal(200);
  });

  it('accepts a confirmation one second before it expires', async () => {
    svc.clock.set('2026-03-10T14:00:00.000Z');
    const code = await newCode();
    const { confirmation_id } = await toolOk(svc, token, 'codes_delete', { code_ulid: code });
    svc.clock.advance((CONFIRMATION_TTL_SECONDS - 1) * 1000);
    await toolOk(svc, token, 'codes_delete', { code_ulid: code, confirm: true, confirmation_id });
    expect((await svc.get(`/v1/qr-codes/${code}`, token)).status).to.equal(404);
  });

  it('binds the arguments, not their key order', async () => {
    const code = await newCode();
    const { confirmation_id } = await toolOk(svc, token, 'codes_bulk_update_status', {
      code_ulids: [code],
      status: 'paused',
    });
    const done = await toolOk(svc, token, 'codes_bulk_update_status', {
      confirmation_id,
      status: 'paused',
      confirm: true,
      code_ulids: [code],
    });
    expect(done.data[0].status).to.equal('paused');
  });

  it('previews a status change with before and after, changing nothing', async () => {
    const a = await newCode();
    const b = await newCode();
    await toolOk(svc, token, 'codes_update', { code_ulid: b, status: 'paused' });
    const preview = await toolOk(svc, token, 'codes_bulk_update_status', { code_ulids: [a, b], status: 'paused' });
    expect(preview.preview).to.deep.include({
      action: 'update_status',
      status: 'paused',
      count: 2,
      changing: 1,
      truncated: false,
    });
    expect(
      preview.preview.codes.map((c: { ulid: string; status_before: string }) => [c.ulid, c.status_before]).sort(),
    ).to.deep.equal(
      [
        [a, 'active'],
        [b, 'paused'],
      ].sort(),
    );
    expect((await svc.get(`/v1/qr-codes/${a}`, token)).body.data.status).to.equal('active');
  });

  it('asks for confirmation above 10 rows only, and executes all rows at once after it', async () => {
    const start = await liveCodes();
    const ten = await toolOk(svc, token, 'codes_bulk_create', { rows: rows(10, 'ten') });
    expect(ten.data).to.have.length(10);
    expect(await liveCodes()).to.equal(start + 10);

    const args = { rows: rows(11, 'eleven') };
    const preview = await toolOk(svc, token, 'codes_bulk_create', args);
    expect(preview.requires_confirmation).to.equal(true);
    expect(preview.preview).to.deep.include({ action: 'create', count: 11, truncated: false });
    expect(preview.preview.codes[0]).to.deep.include({
      slug: `${orgSlug}/eleven-0`,
      destination: 'https://example.com/eleven/0',
      status: 'active',
    });
    expect(await liveCodes()).to.equal(start + 10);

    const done = await toolOk(svc, token, 'codes_bulk_create', {
      ...args,
      confirm: true,
      confirmation_id: preview.confirmation_id,
    });
    expect(done.data.map((c: { slug: string }) => c.slug)).to.deep.equal(args.rows.map((r) => `${orgSlug}/${r.slug}`));
    expect(await liveCodes()).to.equal(start + 21);
  });

  it('validates every row in the bulk preview and issues no confirmation for invalid rows', async () => {
    const bad = rows(12, 'bad');
    bad[11].slug = 'ten-0'; // taken by the previous test
    bad[3].destination = 'not a url';
    const issued = await svc.app
      .db('mcp_confirmations')
      .where({ org_id: orgId })
      .count<{ count: number }[]>('* as count');
    const err = await toolError(svc, token, 'codes_bulk_create', { rows: bad });
    expect(err.code).to.equal('validation_failed');
    expect(Object.keys(err.errors).sort()).to.deep.equal(['rows.11.slug', 'rows.3.destination']);
    expect(err.errors['rows.11.slug']).to.deep.equal(['The slug has already been taken.']);
    expect(
      await svc.app.db('mcp_confirmations').where({ org_id: orgId }).count<{ count: number }[]>('* as count'),
    ).to.deep.equal(issued);
  });

  it('refuses more than 1000 rows and an empty row list', async () => {
    const tooMany = await toolError(svc, token, 'codes_bulk_create', { rows: rows(1001, 'many') });
    expect(tooMany.errors).to.deep.equal({ rows: ['Must have at most 1000 items.'] });
    const none = await toolError(svc, token, 'codes_bulk_create', { rows: [] });
    expect(none.errors).to.deep.equal({ rows: ['Must have at least 1 item.'] });
    const noUlids = await toolError(svc, token, 'codes_bulk_update_status', { code_ulids: [], status: 'paused' });
    expect(noUlids.errors).to.deep.equal({ code_ulids: ['Must have at least 1 item.'] });
  });

  it('creates 1000 rows in one confirmed call', async function () {
    this.timeout(120_000);
    const start = await liveCodes();
    const args = { rows: rows(1000, 'k') };
    const preview = await toolOk(svc, token, 'codes_bulk_create', args);
    expect(preview.preview).to.deep.include({ count: 1000, truncated: true });
    expect(preview.preview.codes).to.have.length(50);
    const done = await toolOk(svc, token, 'codes_bulk_create', {
      ...args,
      confirm: true,
      confirmation_id: preview.confirmation_id,
    });
    expect(done.data).to.have.length(1000);
    expect(await liveCodes()).to.equal(start + 1000);
  });
});
