import { expect } from 'chai';
import { fallbackDomain } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { waitFor } from '../helpers/poll.js';
import { callTool, rpc } from './mcp-helpers.js';

/** Billable calls of the organization this month. */
async function metered(svc: TestService, orgId: number): Promise<number> {
  const rows = await svc.app.db('api_usage_months').where({ org_id: orgId });
  return rows.reduce((s, r) => s + Number(r.calls), 0);
}

describe('idempotency keys on POST and PATCH', () => {
  let svc: TestService;
  let domainUlid: string;
  before(async () => {
    svc = await startTestService({ config: { platformRateLimitPerMin: 10_000 } });
    domainUlid = (await fallbackDomain(svc.app)).ulid;
  });
  after(() => svc.close());
  afterEach(() => svc.clock.reset());

  const post = (path: string, token: string, body: unknown, key?: string) =>
    svc.request('POST', path, { token, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });

  it('50 concurrent identical POSTs with one key create one code, answer 50 times the same and meter one call', async () => {
    const { org, token } = await svc.createOrg();
    const before = await metered(svc, org.id);
    const body = { slug: 'once', destination: 'https://example.com/once', domain_ulid: domainUlid };
    const answers = await Promise.all(Array.from({ length: 50 }, () => post('/v1/qr-codes', token, body, 'key-50')));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(50).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).to.equal(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).to.have.length(49);
    const codes = await svc.app.db('qr_codes').where({ org_id: org.id });
    expect(codes).to.have.length(1);
    expect(await metered(svc, org.id)).to.equal(before + 1);
  });

  it('refuses the same key with a different body or on another endpoint (422 idempotency_key_reused)', async () => {
    const { org, token } = await svc.createOrg();
    const first = await post('/v1/brands', token, { name: 'Alpha' }, 'brand-key');
    expect(first.status).to.equal(201);
    const other = await post('/v1/brands', token, { name: 'Beta' }, 'brand-key');
    expect(other.status).to.equal(422);
    expect(other.body.code).to.equal('idempotency_key_reused');
    const elsewhere = await post('/v1/qr-styles', token, { name: 'Alpha', config: {} }, 'brand-key');
    expect(elsewhere.status).to.equal(422);
    expect(elsewhere.body.code).to.equal('idempotency_key_reused');
    expect(await svc.app.db('brands').where({ org_id: org.id })).to.have.length(1);
    expect(await svc.app.db('qr_styles').where({ org_id: org.id })).to.have.length(0);
  });

  it('keeps an error the handler gave and replays it, but releases a key whose request was invalid', async () => {
    const { token } = await svc.createOrg();
    const invalid = await post('/v1/qr-codes', token, { slug: 'x' }, 'fix-me');
    expect(invalid.status).to.equal(422);
    expect(invalid.body.code).to.equal('validation_failed');
    // The invalid request never ran: the same key serves the corrected request.
    const body = { slug: 'taken', destination: 'https://example.com/', domain_ulid: domainUlid };
    expect((await post('/v1/qr-codes', token, body, 'fix-me')).status).to.equal(201);

    const clash = await post('/v1/qr-codes', token, body, 'clash');
    expect(clash.status).to.equal(422);
    expect(clash.body.errors.slug).to.deep.equal(['The slug has already been taken.']);
    const again = await post('/v1/qr-codes', token, body, 'clash');
    expect(again.status).to.equal(422);
    expect(again.text).to.equal(clash.text);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('replays a PATCH for 24 hours and runs it again afterwards', async () => {
    const { token } = await svc.createOrg();
    const brand = await post('/v1/brands', token, { name: 'Gamma' });
    const path = `/v1/brands/${brand.body.data.ulid}`;
    const patch = (key: string) =>
      svc.request('PATCH', path, { token, body: { name: 'Delta' }, headers: { 'Idempotency-Key': key } });
    const first = await patch('p-1');
    expect(first.status).to.equal(200);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    svc.clock.advance(23 * 3600_000);
    expect((await patch('p-1')).headers.get('idempotent-replayed')).to.equal('true');
    svc.clock.advance(3600_000 + 1000);
    const later = await patch('p-1');
    expect(later.status).to.equal(200);
    expect(later.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('scopes keys to the organization and ignores them on GET', async () => {
    const a = await svc.createOrg();
    const b = await svc.createOrg();
    expect((await post('/v1/brands', a.token, { name: 'Same' }, 'shared')).status).to.equal(201);
    const other = await post('/v1/brands', b.token, { name: 'Same' }, 'shared');
    expect(other.status).to.equal(201);
    expect(other.headers.get('idempotent-replayed')).to.equal(null);
    const get = await svc.get('/v1/brands', a.token, { 'Idempotency-Key': 'shared' });
    expect(get.status).to.equal(200);
    expect(get.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('refuses a key that is not 1 to 255 visible ASCII characters', async () => {
    const { token } = await svc.createOrg();
    const res = await post('/v1/brands', token, { name: 'Long' }, 'k'.repeat(256));
    expect(res.status).to.equal(422);
    expect(res.body.errors).to.have.key('idempotency_key');
  });

  it('refuses an empty Idempotency-Key header (422) rather than taking it for no key', async () => {
    const { org, token } = await svc.createOrg();
    for (let i = 0; i < 2; i++) {
      const res = await post('/v1/brands', token, { name: 'Empty key' }, '');
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.have.key('idempotency_key');
    }
    expect(await svc.app.db('brands').where({ org_id: org.id })).to.have.length(0);
  });

  it('takes idempotency_key on MCP tools mapped to POST and PATCH, and replays across REST and MCP', async () => {
    const { org, token } = await svc.createOrg();
    const list = await rpc(svc, token, 'tools/list', {});
    const byName = Object.fromEntries(list.body.result.tools.map((t: any) => [t.name, t]));
    expect(byName.codes_create.inputSchema.properties).to.have.property('idempotency_key');
    expect(byName.codes_update.inputSchema.properties).to.have.property('idempotency_key');
    expect(byName.codes_list.inputSchema.properties).to.not.have.property('idempotency_key');
    expect(byName.codes_delete.inputSchema.properties).to.not.have.property('idempotency_key');

    const args = { slug: 'mcp-once', destination: 'https://example.com/m', domain_ulid: domainUlid };
    const first = await callTool(svc, token, 'codes_create', { ...args, idempotency_key: 'tool-key' });
    expect(first.isError).to.equal(false);
    expect(first.http.body.result._meta).to.equal(undefined);
    const second = await callTool(svc, token, 'codes_create', { ...args, idempotency_key: 'tool-key' });
    expect(second.payload).to.deep.equal(first.payload);
    expect(second.http.body.result._meta).to.deep.equal({ idempotent_replayed: true });
    const rest = await post('/v1/qr-codes', token, args, 'tool-key');
    expect(rest.status).to.equal(201);
    expect(rest.body).to.deep.equal(first.payload);
    expect(rest.headers.get('idempotent-replayed')).to.equal('true');
    expect(await svc.app.db('qr_codes').where({ org_id: org.id })).to.have.length(1);
  });

  it('keeps the key of a guarded tool for its confirmed call, not its preview', async () => {
    const { org, token } = await svc.createOrg();
    const rows = Array.from({ length: 11 }, (_, i) => ({
      slug: `g${i}`,
      destination: 'https://example.com/g',
      domain_ulid: domainUlid,
    }));
    const preview = await callTool(svc, token, 'codes_bulk_create', { rows, idempotency_key: 'bulk' });
    expect(preview.payload.requires_confirmation).to.equal(true);
    const confirm = { rows, confirm: true, confirmation_id: preview.payload.confirmation_id, idempotency_key: 'bulk' };
    const done = await callTool(svc, token, 'codes_bulk_create', confirm);
    expect(done.isError).to.equal(false);
    expect(done.payload.data).to.have.length(11);
    // A retry of the confirmed call replays; the spent confirmation is not consumed again.
    const retry = await callTool(svc, token, 'codes_bulk_create', confirm);
    expect(retry.isError).to.equal(false);
    expect(retry.payload).to.deep.equal(done.payload);
    expect(await svc.app.db('qr_codes').where({ org_id: org.id })).to.have.length(11);
  });
});

describe('idempotency keys of a call still running', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ config: { idempotencyWaitMs: 100 } });
  });
  after(() => svc.close());

  it('answers 409 idempotency_key_in_progress while the first call runs, then replays its answer', async () => {
    const { org, token } = await svc.createOrg();
    const headers = { 'Idempotency-Key': 'slow' };
    // One call so the organization's rate window row exists; holding it makes the next call wait in admission.
    expect((await svc.get('/v1/brands', token)).status).to.equal(200);
    const trx = await svc.app.db.transaction();
    let first: Promise<{ status: number; text: string }>;
    try {
      await trx('rate_windows').where({ org_id: org.id, bucket: 'api' }).forUpdate();
      first = svc.request('POST', '/v1/brands', { token, body: { name: 'Slow' }, headers });
      // The first call holds the key.
      await waitFor(
        async () =>
          (await svc.app.db('idempotency_keys').where({ org_id: org.id, key: 'slow', state: 'running' }).first()) !==
          undefined,
      );
      const second = await svc.request('POST', '/v1/brands', { token, body: { name: 'Slow' }, headers });
      expect(second.status).to.equal(409);
      expect(second.body.code).to.equal('idempotency_key_in_progress');
    } finally {
      await trx.commit();
    }
    const done = await first!;
    expect(done.status).to.equal(201);
    const replay = await svc.request('POST', '/v1/brands', { token, body: { name: 'Slow' }, headers });
    expect(replay.text).to.equal(done.text);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(await svc.app.db('brands').where({ org_id: org.id })).to.have.length(1);
  });
});
