// Dashboard accounts over real HTTP: one-time links, sign-in, sessions and their expiry, CSRF,
// the sign-in throttle across two processes, members and invitations.
import { expect } from 'chai';
import { boot } from '../../server/bootstrap.js';
import { createApiHandler, listen } from '../../server/http/api-app.js';
import { apiMounts } from '../../server/mounts.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { linkSecret, qrctl, WebClient } from '../helpers/web-client.js';

const PASSWORD = 'correct horse battery';

describe('dashboard accounts and sessions', function () {
  this.timeout(60_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService({
      config: {
        webSignInAccountLimit: 5,
        webSignInAddressLimit: 1000,
        webSessionIdleMinutes: 30,
        webSessionMaxHours: 2,
      },
    });
  });
  after(() => svc?.close());
  afterEach(() => svc.clock.reset());

  /** An organization made with qrctl, whose owner set a password through the printed link. */
  async function ownerWithPassword(slug: string) {
    const created = await qrctl(svc.app, [
      'org',
      'create',
      '--name',
      `Org ${slug}`,
      '--slug',
      slug,
      '--plan',
      'business_monthly',
      '--currency',
      'EUR',
      '--owner-email',
      `owner@${slug}.example`,
    ]);
    const web = new WebClient(svc.url);
    const res = await web.redeem(linkSecret(created.sign_in_link), PASSWORD);
    expect(res.status).to.equal(200);
    return { web, orgUlid: created.organization.ulid as string, email: `owner@${slug}.example` };
  }

  it('qrctl org create prints a one-time link that sets the owner’s password and signs them in', async () => {
    const created = await qrctl(svc.app, [
      'org',
      'create',
      '--name',
      'Linked',
      '--slug',
      'linked',
      '--plan',
      'business_monthly',
      '--currency',
      'EUR',
      '--owner-email',
      'boss@linked.example',
    ]);
    expect(created.sign_in_link).to.match(/^http:\/\/127\.0\.0\.1:\d+\/app\/link\/[A-Za-z0-9]{48}$/);
    const secret = linkSecret(created.sign_in_link);
    const web = new WebClient(svc.url);
    await web.get('/app/api/session');
    const described = await web.get(`/app/api/links/${secret}`);
    expect(described.body.data).to.include({ purpose: 'sign_in', email: 'boss@linked.example', has_password: false });

    const short = await web.post(`/app/api/links/${secret}`, { password: 'short' });
    expect(short.status).to.equal(422);
    expect(short.body.errors.password[0]).to.match(/at least 10/);

    const res = await web.post(`/app/api/links/${secret}`, { password: PASSWORD });
    expect(res.status).to.equal(200);
    expect(res.body.user.email).to.equal('boss@linked.example');
    expect(res.body.organizations).to.have.length(1);
    expect(res.body.organizations[0]).to.include({ slug: 'linked', role: 'owner' });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('qr_session='))!;
    expect(cookie)
      .to.match(/HttpOnly/)
      .and.match(/SameSite=Lax/)
      .and.match(/Path=\//);
    expect(cookie).not.to.match(/Secure/);

    const again = await new WebClient(svc.url).redeem(secret, 'another long password');
    expect(again.status).to.equal(404);
    expect(again.body.message).to.match(/expired or was already used/);

    const relink = await qrctl(svc.app, ['user', 'login-link', '--email', 'boss@linked.example']);
    expect(linkSecret(relink.sign_in_link)).not.to.equal(secret);
  });

  it('signs in with email and password, refuses a wrong one with 401, and signs out', async () => {
    const { email } = await ownerWithPassword('signin');
    const web = new WebClient(svc.url);
    expect((await web.signIn(email, 'wrong password!')).status).to.equal(401);
    expect((await web.get('/app/api/orgs/x/v1/qr-codes')).status).to.equal(401);
    const ok = await web.signIn(email.toUpperCase(), PASSWORD);
    expect(ok.status).to.equal(200);
    expect(ok.body.user.email).to.equal(email);
    expect((await web.get(`/app/api/orgs/${ok.body.organizations[0].ulid}/v1/qr-codes?limit=5`)).status).to.equal(200);
    expect((await web.post('/app/api/sign-out')).status).to.equal(204);
    expect((await web.get(`/app/api/orgs/${ok.body.organizations[0].ulid}/v1/qr-codes?limit=5`)).status).to.equal(401);
    expect((await web.get('/app/api/session')).body.user).to.equal(null);
  });

  it('refuses every write without the CSRF token of the session, and changes nothing', async () => {
    const { web, orgUlid } = await ownerWithPassword('csrf');
    const api = web.org(orgUlid);
    const domain = (await api.get('/v1/domains')).body.data[0].ulid;
    const code = { slug: 'c1', destination: 'https://example.com/', domain_ulid: domain };

    const missing = await web.request('POST', `/app/api/orgs/${orgUlid}/v1/qr-codes`, { body: code, csrf: null });
    expect(missing.status).to.equal(403);
    expect(missing.body.code).to.equal('csrf_failed');
    const wrong = await web.request('POST', `/app/api/orgs/${orgUlid}/v1/qr-codes`, {
      body: code,
      csrf: 'x'.repeat(43),
    });
    expect(wrong.status).to.equal(403);
    expect((await web.request('POST', '/app/api/sign-out', { csrf: null })).status).to.equal(403);
    expect((await api.get('/v1/qr-codes')).body.data).to.have.length(0);

    expect((await api.post('/v1/qr-codes', code)).status).to.equal(201);
    // The sign-in form is protected too, by the pre-session cookie's token.
    const anon = new WebClient(svc.url);
    await anon.get('/app/api/session');
    const noToken = await anon.request('POST', '/app/api/sign-in', {
      body: { email: 'owner@csrf.example', password: PASSWORD },
      csrf: null,
    });
    expect(noToken.status).to.equal(403);
  });

  it('ends a session after the idle timeout and after the absolute lifetime', async () => {
    const { email } = await ownerWithPassword('expiry');
    const idle = new WebClient(svc.url);
    await idle.signIn(email, PASSWORD);
    svc.clock.advance(29 * 60_000);
    expect((await idle.get('/app/api/session')).body.user).not.to.equal(null);
    svc.clock.advance(31 * 60_000);
    expect((await idle.get('/app/api/session')).body.user).to.equal(null);

    svc.clock.reset();
    const busy = new WebClient(svc.url);
    await busy.signIn(email, PASSWORD);
    // Active every 20 minutes: the idle timer never runs out, the 2-hour lifetime does.
    for (let i = 0; i < 5; i++) {
      svc.clock.advance(20 * 60_000);
      expect((await busy.get('/app/api/session')).body.user, `after ${(i + 1) * 20} min`).not.to.equal(null);
    }
    svc.clock.advance(21 * 60_000);
    expect((await busy.get('/app/api/session')).body.user).to.equal(null);
  });

  it('signs out everywhere: every session of the user ends', async () => {
    const { web, email } = await ownerWithPassword('everywhere');
    const other = new WebClient(svc.url);
    await other.signIn(email, PASSWORD);
    expect((await other.get('/app/api/session')).body.user).not.to.equal(null);
    const res = await web.post('/app/api/sign-out-everywhere');
    expect(res.status).to.equal(200);
    expect(res.body.sessions_ended).to.equal(2);
    expect((await other.get('/app/api/session')).body.user).to.equal(null);
    expect((await web.get('/app/api/session')).body.user).to.equal(null);
  });

  it('throttles sign-in per account across two processes: of 100 concurrent attempts only the limit is checked', async () => {
    const { email } = await ownerWithPassword('throttle');
    // A second process on the same database: its own context, pool and listener.
    const second = await boot(svc.app.config, svc.app.log, {
      databaseUrl: svc.app.databaseUrl,
      sharedClickHouse: svc.app.ch,
      migrate: false,
      clock: svc.clock,
    });
    const listener = await listen(createApiHandler(second, { mounts: apiMounts }), 0, '127.0.0.1');
    try {
      const urls = [svc.url, `http://127.0.0.1:${listener.port}`];
      const clients = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const c = new WebClient(urls[i % 2]);
          await c.get('/app/api/session');
          return c;
        }),
      );
      const statuses = (
        await Promise.all(clients.map((c) => c.post('/app/api/sign-in', { email, password: 'not the password' })))
      ).map((r) => r.status);
      expect(statuses.filter((s) => s === 401)).to.have.length(5);
      expect(statuses.filter((s) => s === 429)).to.have.length(95);
      // The right password is refused too until the window passes.
      const late = await new WebClient(svc.url).signIn(email, PASSWORD);
      expect(late.status).to.equal(429);
      expect(Number(late.headers.get('Retry-After'))).to.be.within(1, 15 * 60);
      svc.clock.advance(15 * 60_000);
      expect((await new WebClient(urls[1]).signIn(email, PASSWORD)).status).to.equal(200);
    } finally {
      await listener.close();
      await second.close();
    }
  });

  it('throttles sign-in per client address', async () => {
    const limited = await startTestService({ config: { webSignInAddressLimit: 3 } });
    try {
      const web = new WebClient(limited.url);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await web.signIn(`nobody${i}@example.com`, 'whatever pass')).status);
      expect(statuses).to.deep.equal([401, 401, 401, 429, 429]);
    } finally {
      await limited.close();
    }
  });

  it('marks the session cookie Secure with the __Host- prefix behind https', async () => {
    const https = await startTestService({ config: { publicApiUrl: 'https://qr.example.com' } });
    try {
      const web = new WebClient(https.url);
      const pre = await web.get('/app/api/session');
      expect(pre.headers.getSetCookie()[0]).to.match(/^__Host-qr_pre=.*; Secure$/);
      const created = await qrctl(https.app, [
        'org',
        'create',
        '--name',
        'Secure',
        '--slug',
        'secure',
        '--plan',
        'business_monthly',
        '--currency',
        'EUR',
        '--owner-email',
        'owner@secure.example',
      ]);
      expect(created.sign_in_link).to.match(/^https:\/\/qr\.example\.com\/app\/link\//);
      const res = await web.post(`/app/api/links/${linkSecret(created.sign_in_link)}`, { password: PASSWORD });
      expect(res.status).to.equal(200);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-qr_session='))!;
      expect(cookie).to.match(/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await https.close();
    }
  });

  it('lets owners and admins invite by link and manage roles; only owners touch the owner role', async () => {
    const { web: owner, orgUlid } = await ownerWithPassword('members');
    const api = owner.org(orgUlid);
    const invited = await api.post('/invitations', { email: 'ada@members.example', role: 'admin' });
    expect(invited.status).to.equal(201);
    expect(invited.body.data.url).to.match(/\/app\/link\/[A-Za-z0-9]{48}$/);
    expect((await api.get('/invitations')).body.data.map((i: any) => i.email)).to.deep.equal(['ada@members.example']);

    const ada = new WebClient(svc.url);
    await ada.get('/app/api/session');
    const described = await ada.get(`/app/api/links/${linkSecret(invited.body.data.url)}`);
    expect(described.body.data).to.deep.include({
      purpose: 'invite',
      role: 'admin',
      organization: { name: 'Org members' },
    });
    const joined = await ada.post(`/app/api/links/${linkSecret(invited.body.data.url)}`, {
      password: PASSWORD,
      name: 'Ada',
    });
    expect(joined.status).to.equal(200);
    expect(joined.body.organizations[0]).to.include({ ulid: orgUlid, role: 'admin' });
    expect((await api.get('/invitations')).body.data).to.have.length(0);

    const asAdmin = ada.org(orgUlid);
    const ownerInvite = await asAdmin.post('/invitations', { email: 'x@members.example', role: 'owner' });
    expect(ownerInvite.status).to.equal(403);
    const members = (await asAdmin.get('/members')).body.data;
    const ownerRow = members.find((m: any) => m.role === 'owner');
    expect((await asAdmin.patch(`/members/${ownerRow.user_ulid}`, { role: 'viewer' })).status).to.equal(403);
    expect((await asAdmin.delete(`/members/${ownerRow.user_ulid}`)).status).to.equal(403);
    // The last owner stays an owner.
    expect((await api.patch(`/members/${ownerRow.user_ulid}`, { role: 'admin' })).status).to.equal(409);

    const adaRow = members.find((m: any) => m.email === 'ada@members.example');
    expect((await api.patch(`/members/${adaRow.user_ulid}`, { role: 'viewer' })).body.data.role).to.equal('viewer');
    // As a viewer Ada can read codes but no longer manage members or create codes.
    expect((await asAdmin.get('/members')).status).to.equal(403);
    expect((await asAdmin.get('/v1/qr-codes?limit=1')).status).to.equal(200);
    const create = await asAdmin.post('/v1/qr-codes', { slug: 'nope', destination: 'https://e.com', domain_ulid: 'x' });
    expect(create.status).to.equal(403);
    expect(create.body.required_ability).to.equal('codes.create');

    expect((await api.delete(`/members/${adaRow.user_ulid}`)).status).to.equal(204);
    expect((await asAdmin.get('/v1/qr-codes?limit=1')).status).to.equal(404);
    const audit = await svc.app.db('audit_log').orderBy('id').pluck('action');
    expect(audit).to.include.members(['invitation.created', 'member.joined', 'member.role_changed', 'member.removed']);
  });

  it('an invitation for a person who has a password asks for that password', async () => {
    const a = await ownerWithPassword('inv-a');
    const b = await ownerWithPassword('inv-b');
    const invited = await b.web.org(b.orgUlid).post('/invitations', { email: a.email, role: 'editor' });
    const secret = linkSecret(invited.body.data.url);
    const visitor = new WebClient(svc.url);
    await visitor.get('/app/api/session');
    expect((await visitor.get(`/app/api/links/${secret}`)).body.data.has_password).to.equal(true);
    expect((await visitor.post(`/app/api/links/${secret}`, { password: 'not my password' })).status).to.equal(401);
    const joined = await visitor.post(`/app/api/links/${secret}`, { password: PASSWORD });
    expect(joined.status).to.equal(200);
    expect(joined.body.organizations.map((o: any) => o.role).sort()).to.deep.equal(['editor', 'owner']);
  });
});
