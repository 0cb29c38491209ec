import { expect } from 'chai';
import { ABILITIES } from '../../server/auth/abilities.js';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('token endpoints', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ config: { platformRateLimitPerMin: 10_000 } });
  });
  after(() => svc.close());

  it('lists every ability as assignable to an owner’s * token, and the full catalog', async () => {
    const { token } = await svc.createOrg();
    const res = await svc.get('/v1/tokens/abilities', token);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ assignable: [...ABILITIES], all: [...ABILITIES] });
  });

  it('lists as assignable exactly the abilities of a narrower token', async () => {
    const { org } = await svc.createOrg();
    const token = await svc.createToken(org, { abilities: ['api.tokens.manage', 'codes.view', 'brands.view'] });
    const res = await svc.get('/v1/tokens/abilities', token);
    expect(res.body.assignable).to.deep.equal(['codes.view', 'brands.view', 'api.tokens.manage']);
  });

  it('creates a token whose secret is shown once, works, and is stored only as a hash', async () => {
    const { token } = await svc.createOrg();
    const res = await svc.post('/v1/tokens', token, {
      name: 'ci',
      abilities: ['codes.view'],
      expires_at: '2099-01-01T00:00:00Z',
    });
    expect(res.status).to.equal(201);
    expect(res.body.token).to.match(/^\d+\|[A-Za-z0-9]{48}$/);
    expect(res.body.data).to.deep.include({
      name: 'ci',
      abilities: ['codes.view'],
      last_used_at: null,
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    expect(res.body.data.id).to.equal(Number(res.body.token.split('|')[0]));
    const row = await svc.app.db('api_tokens').where({ id: res.body.data.id }).first();
    expect(Buffer.from(row.secret_hash).toString('hex')).to.have.length(64);
    expect(JSON.stringify(row)).not.to.include(res.body.token.split('|')[1]);
    const status = await svc.get('/v1/status', res.body.token);
    expect(status.body.token).to.deep.equal({ name: 'ci', abilities: ['codes.view'] });
    const listed = await svc.get('/v1/tokens', token);
    const mine = listed.body.data.find((t: { id: number }) => t.id === res.body.data.id);
    expect(mine.last_used_at).to.be.a('string');
    expect(JSON.stringify(listed.body)).not.to.include(res.body.token.split('|')[1]);
  });

  it('defaults abilities to * when omitted', async () => {
    const { token } = await svc.createOrg();
    const res = await svc.post('/v1/tokens', token, { name: 'all' });
    expect(res.status).to.equal(201);
    expect(res.body.data.abilities).to.deep.equal(['*']);
  });

  it('refuses to grant an ability the creating token lacks (403) and creates nothing', async () => {
    const { org } = await svc.createOrg();
    const token = await svc.createToken(org, { abilities: ['api.tokens.manage', 'codes.view'] });
    const before = await svc.app.db('api_tokens').where({ org_id: org.id }).count<{ c: number }[]>('* as c');
    for (const abilities of [['codes.view', 'codes.delete'], ['*'], undefined]) {
      const res = await svc.post('/v1/tokens', token, { name: 'escalate', ...(abilities ? { abilities } : {}) });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('forbidden');
      expect(res.body.required_ability).to.be.oneOf([...ABILITIES]);
    }
    const after = await svc.app.db('api_tokens').where({ org_id: org.id }).count<{ c: number }[]>('* as c');
    expect(after[0].c).to.equal(before[0].c);
  });

  it('refuses to grant beyond the holder’s role even with a * token', async () => {
    const { org } = await svc.createOrg();
    await svc.app.db('users').insert({ ulid: '01JABCDEFGHJKMNPQRSTVWXYZ0', email: 'admin2@example.com' });
    const admin = await svc.createToken(org, { role: 'admin', email: 'admin2@example.com' });
    // Demote the admin to editor: the * token now holds only what an editor holds.
    await svc.app
      .db('memberships')
      .where({ org_id: org.id })
      .whereIn('user_id', svc.app.db('users').select('id').where({ email: 'admin2@example.com' }))
      .update({ role: 'editor' });
    const res = await svc.post('/v1/tokens', admin, { name: 'x', abilities: ['codes.view'] });
    expect(res.status).to.equal(403);
    expect(res.body.required_ability).to.equal('api.tokens.manage');
  });

  for (const [body, field] of [
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'x', abilities: [] }, 'abilities'],
    [{ name: 'x', abilities: ['codes.fly'] }, 'abilities.0'],
    [{ name: 'x', abilities: 'codes.view' }, 'abilities'],
    [{ name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
    [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    [{ name: 'x', admin: true }, 'admin'],
  ] as const) {
    it(`answers 422 on ${JSON.stringify(body)}`, async () => {
      const { token } = await svc.createOrg();
      const res = await svc.post('/v1/tokens', token, body);
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.errors).to.have.property(field);
    });
  }

  it('lists only the caller’s own tokens in the organization', async () => {
    const { org, token } = await svc.createOrg();
    await svc.createToken(org, { role: 'admin', email: 'someone-else@example.com' });
    const other = await svc.createOrg();
    const res = await svc.get('/v1/tokens', token);
    expect(res.body.data.map((t: { name: string }) => t.name)).to.deep.equal(['Initial token']);
    const otherList = await svc.get('/v1/tokens', other.token);
    expect(otherList.body.data).to.have.length(1);
    expect(otherList.body.data[0].id).not.to.equal(res.body.data[0].id);
  });

  it('revokes a token (204), after which it is 401 and no longer listed', async () => {
    const { token } = await svc.createOrg();
    const created = await svc.post('/v1/tokens', token, { name: 'temp' });
    const del = await svc.delete(`/v1/tokens/${created.body.data.id}`, token);
    expect(del.status).to.equal(204);
    expect(del.text).to.equal('');
    expect((await svc.get('/v1/status', created.body.token)).status).to.equal(401);
    expect((await svc.get('/v1/tokens', token)).body.data.map((t: { name: string }) => t.name)).to.deep.equal([
      'Initial token',
    ]);
    expect((await svc.delete(`/v1/tokens/${created.body.data.id}`, token)).status).to.equal(404);
  });

  it('lets a narrow token revoke only tokens whose abilities it holds, and itself', async () => {
    const { token: star } = await svc.createOrg();
    const narrow = await svc.post('/v1/tokens', star, { name: 'narrow', abilities: ['api.tokens.manage'] });
    const wider = await svc.post('/v1/tokens', star, {
      name: 'wider',
      abilities: ['api.tokens.manage', 'codes.view'],
    });
    const same = await svc.post('/v1/tokens', star, { name: 'same', abilities: ['api.tokens.manage'] });
    const starId = (await svc.get('/v1/tokens', star)).body.data.find(
      (t: { name: string }) => t.name === 'Initial token',
    ).id;

    const refused = await svc.delete(`/v1/tokens/${starId}`, narrow.body.token);
    expect(refused.status).to.equal(403);
    expect(refused.body).to.deep.include({ code: 'forbidden', required_ability: 'codes.view' });
    expect(refused.body.message).to.match(/cannot revoke a token with abilities you do not hold: codes\.view, /);
    expect((await svc.delete(`/v1/tokens/${wider.body.data.id}`, narrow.body.token)).status).to.equal(403);
    // Nothing was revoked, and listing still shows every token.
    expect((await svc.get('/v1/status', star)).status).to.equal(200);
    expect((await svc.get('/v1/tokens', narrow.body.token)).body.data).to.have.length(4);

    expect((await svc.delete(`/v1/tokens/${same.body.data.id}`, narrow.body.token)).status).to.equal(204);
    expect((await svc.delete(`/v1/tokens/${narrow.body.data.id}`, wider.body.token)).status).to.equal(204);
    expect((await svc.delete(`/v1/tokens/${wider.body.data.id}`, wider.body.token)).status).to.equal(204);
    expect((await svc.get('/v1/status', wider.body.token)).status).to.equal(401);
  });

  it('cannot see or revoke a token of another organization (404)', async () => {
    const a = await svc.createOrg();
    const b = await svc.createOrg();
    const bId = Number(b.token.split('|')[0]);
    const res = await svc.delete(`/v1/tokens/${bId}`, a.token);
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('not_found');
    expect((await svc.get('/v1/status', b.token)).status).to.equal(200);
  });

  it('answers 422 for a token id that is not an integer', async () => {
    const { token } = await svc.createOrg();
    const res = await svc.delete('/v1/tokens/abc', token);
    expect(res.status).to.equal(422);
    expect(res.body.errors).to.have.property('token_id');
  });
});
