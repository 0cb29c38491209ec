import { expect } from 'chai';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('authentication and abilities', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(() => svc.close());

  function expect401(res: { status: number; body: any; headers: Headers }) {
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('unauthenticated');
    expect(res.body.message).to.be.a('string').and.not.empty;
    expect(res.headers.get('www-authenticate')).to.equal('Bearer');
  }

  it('answers 401 without an Authorization header', async () => {
    expect401(await svc.get('/v1/status'));
  });

  it('answers 401 for malformed tokens and schemes', async () => {
    for (const header of [
      'Bearer',
      'Bearer abc',
      'Basic dXNlcjpwYXNz',
      'Bearer 1|short',
      'Bearer x|' + 'a'.repeat(48),
    ]) {
      const res = await svc.request('GET', '/v1/status', { headers: { Authorization: header } });
      expect401(res);
    }
  });

  it('answers 401 for an unknown token id and for a known id with a wrong secret', async () => {
    const { token } = await svc.createOrg();
    const [id] = token.split('|');
    expect401(await svc.get('/v1/status', `999999|${'A'.repeat(48)}`));
    expect401(await svc.get('/v1/status', `${id}|${'B'.repeat(48)}`));
    expect((await svc.get('/v1/status', token)).status).to.equal(200);
  });

  it('answers 401 once a token has expired', async () => {
    const { org } = await svc.createOrg();
    const token = await svc.createToken(org, { expiresAt: new Date(Date.now() + 60_000) });
    expect((await svc.get('/v1/status', token)).status).to.equal(200);
    svc.clock.advance(61_000);
    try {
      expect401(await svc.get('/v1/status', token));
    } finally {
      svc.clock.reset();
    }
  });

  it('answers 401 for a revoked token', async () => {
    const { org, token } = await svc.createOrg();
    const other = await svc.createToken(org, { email: 'revoke-me@example.com' });
    const otherId = Number(other.split('|')[0]);
    await svc.app.db('api_tokens').where({ id: otherId }).update({ revoked_at: new Date() });
    expect401(await svc.get('/v1/status', other));
    expect((await svc.get('/v1/status', token)).status).to.equal(200);
  });

  it('answers 401 when the token holder is no longer a member', async () => {
    const { org } = await svc.createOrg();
    const token = await svc.createToken(org, { role: 'editor', email: 'leaver@example.com' });
    const user = await svc.app.db('users').where({ email: 'leaver@example.com' }).first('id');
    await svc.app.db('memberships').where({ org_id: org.id, user_id: user.id }).delete();
    expect401(await svc.get('/v1/status', token));
  });

  it('answers 403 with required_ability when the token lacks the ability', async () => {
    const { org } = await svc.createOrg();
    const token = await svc.createToken(org, { abilities: ['codes.view'] });
    const res = await svc.get('/v1/wallet', token);
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({
      message: 'This action requires the wallet.view ability.',
      code: 'forbidden',
      required_ability: 'wallet.view',
    });
    expect(res.headers.get('x-ratelimit-limit')).to.equal('60');
  });

  it('narrows a * token to what the holder’s role allows', async () => {
    const { org } = await svc.createOrg();
    const viewer = await svc.createToken(org, { role: 'viewer' });
    expect((await svc.get('/v1/wallet', viewer)).body.required_ability).to.equal('wallet.view');
    expect((await svc.get('/v1/tokens', viewer)).body.required_ability).to.equal('api.tokens.manage');
    const editor = await svc.createToken(org, { role: 'editor' });
    expect((await svc.get('/v1/wallet', editor)).status).to.equal(403);
    const admin = await svc.createToken(org, { role: 'admin' });
    expect((await svc.get('/v1/wallet', admin)).status).to.equal(200);
  });

  it('refuses an organization without api_access with 403 before rate limiting counts anything', async () => {
    const { org, token } = await svc.createOrg({ plan: null });
    for (let i = 0; i < 65; i++) {
      const res = await svc.get('/v1/organization', token);
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('api_access_disabled');
      expect(res.headers.get('x-ratelimit-limit')).to.equal(null);
    }
    const windows = await svc.app.db('rate_windows').where({ org_id: org.id });
    expect(windows).to.deep.equal([]);
  });

  it('checks the rate limit before the ability: a call without the ability still takes a slot and is not billed', async () => {
    const { org } = await svc.createOrg({ plan: 'starter_monthly' });
    const token = await svc.createToken(org, { abilities: ['codes.view'] });
    svc.clock.set(new Date()); // every call in one minute window
    after(() => svc.clock.reset());
    for (let i = 0; i < 60; i++) expect((await svc.get('/v1/wallet', token)).status).to.equal(403);
    const limited = await svc.get('/v1/wallet', token);
    expect(limited.status).to.equal(429);
    const usage = await svc.app.db('api_usage_months').where({ org_id: org.id });
    expect(usage).to.deep.equal([]);
  });
});
