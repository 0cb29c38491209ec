// The dashboard's calls run the same operations as REST: the member's abilities, organization
// scoping, validation and errors; they are not metered, not in the API minute window, and have a
// per-session limit of their own. The staff area records top-ups; the code list searches.
import { expect } from 'chai';
import { addMember } from '../../server/organizations/service.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { linkSecret, qrctl, signedInClient, WebClient } from '../helpers/web-client.js';

const PASSWORD = 'correct horse battery';

describe('dashboard operations', function () {
  this.timeout(60_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ config: { webRateLimitPerMin: 40, platformRateLimitPerMin: 5 } });
  });
  after(() => svc?.close());
  afterEach(() => svc.clock.reset());

  const signedIn = (email: string) => signedInClient(svc.app, svc.url, email, PASSWORD);

  async function orgWithOwner(plan = 'starter_monthly') {
    const t = await svc.createOrg({ plan });
    return { ...t, web: await signedIn(t.ownerEmail) };
  }

  it('is not metered and not counted in the API minute window', async () => {
    const { org, web, token } = await orgWithOwner('starter_monthly');
    const api = web.org(org.ulid);
    // The starter plan includes no calls and the wallet is empty: a billable REST call is 402.
    expect((await svc.get('/v1/organization', token)).status).to.equal(402);
    for (let i = 0; i < 12; i++) expect((await api.get('/v1/organization')).status).to.equal(200);
    const usage = await svc.app.db('api_usage_months').where({ org_id: org.id }).first();
    expect(Number(usage?.calls ?? 0)).to.equal(0);
    const window = await svc.app.db('rate_windows').where({ org_id: org.id, bucket: 'api' }).first();
    // The REST call above made the only hit of the API window.
    expect(window.hits).to.equal(1);
    const status = (await api.get('/v1/status')).body;
    expect(status.api.calls_used_month).to.equal(0);
    expect(status.token).to.deep.equal({ name: 'Dashboard session', abilities: ['*'] });
  });

  it('serves a code SVG on the dashboard origin with nosniff and a policy that runs and fetches nothing', async () => {
    const { org, web, token } = await orgWithOwner('business_monthly');
    const domain = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
    const made = await svc.post('/v1/qr-codes', token, {
      slug: 'svg-csp',
      destination: 'https://example.com/',
      domain_ulid: domain,
    });
    expect(made.status, made.text).to.equal(201);
    const res = await web.request('GET', `/app/api/orgs/${org.ulid}/v1/qr-codes/${made.body.data.ulid}/image`, {
      headers: { Accept: 'image/svg+xml' },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^image\/svg\+xml/);
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('content-security-policy')).to.match(/^default-src 'none';.*; sandbox$/);
  });

  it('has a per-session limit of its own', async () => {
    svc.clock.set('2030-01-01T10:00:05Z');
    const { org, web } = await orgWithOwner('business_monthly');
    const api = web.org(org.ulid);
    const statuses: number[] = [];
    for (let i = 0; i < 42; i++) statuses.push((await api.get('/v1/organization')).status);
    expect(statuses.filter((s) => s === 200)).to.have.length(40);
    const refused = await api.get('/v1/organization');
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('Retry-After')).to.equal('55');
    // Another session of the same user has its own window.
    const other = new WebClient(svc.url);
    await other.signIn(await ownerEmail(org.id), PASSWORD);
    expect((await other.org(org.ulid).get('/v1/organization')).status).to.equal(200);
    svc.clock.set('2030-01-01T10:01:00Z');
    expect((await api.get('/v1/organization')).status).to.equal(200);
  });

  async function ownerEmail(orgId: number): Promise<string> {
    const row = await svc.app
      .db('memberships as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where({ 'm.org_id': orgId, 'm.role': 'owner' })
      .first('u.email');
    return row.email;
  }

  it('validates input and answers errors exactly as REST does', async () => {
    const { org, web, token } = await orgWithOwner('business_monthly');
    const body = { slug: 'bad slug!', destination: 'ftp://x', domain_ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV' };
    const viaWeb = await web.org(org.ulid).post('/v1/qr-codes', body);
    const viaRest = await svc.post('/v1/qr-codes', token, body);
    expect(viaWeb.status).to.equal(422);
    expect(viaWeb.body).to.deep.equal(viaRest.body);
    const unknownField = await web.org(org.ulid).patch('/wallet/settings', { low_balance_threshold: '1.234' });
    expect(unknownField.status).to.equal(422);
    expect(unknownField.body.errors).to.have.property('low_balance_threshold');
  });

  it('scopes every call to an organization the user belongs to: another one’s code is not found', async () => {
    const a = await orgWithOwner('business_monthly');
    const b = await orgWithOwner('business_monthly');
    const domain = (await svc.get('/v1/domains', b.token)).body.data[0].ulid;
    const code = (
      await svc.post('/v1/qr-codes', b.token, { slug: 'theirs', destination: 'https://b.example', domain_ulid: domain })
    ).body.data;
    const viaOwnOrg = await a.web.org(a.org.ulid).get(`/v1/qr-codes/${code.ulid}`);
    expect(viaOwnOrg.status).to.equal(404);
    expect(viaOwnOrg.body.code).to.equal('not_found');
    const viaTheirOrg = await a.web.org(b.org.ulid).get(`/v1/qr-codes/${code.ulid}`);
    expect(viaTheirOrg.status).to.equal(404);
    expect((await a.web.org(b.org.ulid).delete(`/v1/qr-codes/${code.ulid}`)).status).to.equal(404);
    expect((await svc.get(`/v1/qr-codes/${code.ulid}`, b.token)).status).to.equal(200);
  });

  it('gives a viewer the viewer’s abilities: reading yes, editing and tokens no', async () => {
    const { org, token } = await orgWithOwner('business_monthly');
    await addMember(svc.app, org, 'viewer@web.example', 'viewer');
    const viewer = await signedIn('viewer@web.example');
    const session = await viewer.get('/app/api/session');
    expect(session.body.organizations[0].abilities).to.deep.equal([
      'codes.view',
      'brands.view',
      'domains.view',
      'analytics.view',
    ]);
    const api = viewer.org(org.ulid);
    expect((await api.get('/v1/qr-codes?limit=10')).status).to.equal(200);
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    const create = await api.post('/v1/qr-codes', { slug: 'x', destination: 'https://e.com', domain_ulid: domain });
    expect(create.status).to.equal(403);
    expect(create.body.required_ability).to.equal('codes.create');
    expect((await api.get('/v1/tokens')).status).to.equal(403);
    expect((await api.get('/v1/wallet')).status).to.equal(403);
  });

  it('creates tokens only with abilities the member may assign; the secret works on REST once shown', async () => {
    const { org, token } = await orgWithOwner('business_monthly');
    await addMember(svc.app, org, 'editor@web.example', 'editor');
    const owner = await signedIn(await ownerEmail(org.id));
    const editor = await signedIn('editor@web.example');
    expect((await editor.org(org.ulid).get('/v1/tokens/abilities')).status).to.equal(403);
    const assignable = (await owner.org(org.ulid).get('/v1/tokens/abilities')).body.assignable;
    expect(assignable).to.include('codes.view');
    const created = await owner.org(org.ulid).post('/v1/tokens', { name: 'ci', abilities: ['codes.view'] });
    expect(created.status).to.equal(201);
    expect((await svc.get('/v1/qr-codes?limit=1', created.body.token)).status).to.equal(200);
    expect((await svc.get('/v1/brands', created.body.token)).status).to.equal(403);
    const listed = (await owner.org(org.ulid).get('/v1/tokens')).body.data.map((t: any) => t.name);
    expect(listed).to.include('ci');
    expect(token).to.be.a('string');
  });

  it('lets staff record a top-up that the owner sees in the ledger, audited; others may not', async () => {
    const { org, web } = await orgWithOwner('business_monthly');
    const notStaff = await web.get(`/app/api/staff/organizations?search=${org.slug}`);
    expect(notStaff.status).to.equal(403);
    expect(
      (await web.post(`/app/api/staff/organizations/${org.ulid}/top-ups`, { amount: '5', reference: 'x' })).status,
    ).to.equal(403);

    const staffUser = await qrctl(svc.app, ['user', 'staff', '--email', 'staff@platform.example']);
    expect(staffUser.is_staff).to.equal(true);
    const staff = new WebClient(svc.url);
    expect((await staff.redeem(linkSecret(staffUser.sign_in_link), PASSWORD)).body.user.is_staff).to.equal(true);
    const found = await staff.get(`/app/api/staff/organizations?search=${org.slug.toUpperCase()}`);
    expect(found.body.data.map((o: any) => o.ulid)).to.deep.equal([org.ulid]);
    expect(
      (await staff.post(`/app/api/staff/organizations/${org.ulid}/top-ups`, { amount: '-5', reference: 'x' })).status,
    ).to.equal(422);
    expect(
      (await staff.post(`/app/api/staff/organizations/${org.ulid}/top-ups`, { amount: '1.234', reference: 'x' }))
        .status,
    ).to.equal(422);
    const done = await staff.post(`/app/api/staff/organizations/${org.ulid}/top-ups`, {
      amount: '25.50',
      reference: 'INV-7',
    });
    expect(done.status).to.equal(201);
    expect(done.body.data).to.include({ credited: '25.50', balance: '25.50', currency: 'EUR' });

    const wallet = (await web.org(org.ulid).get('/v1/wallet')).body.data;
    expect(wallet.balance).to.equal('25.50');
    expect(wallet.transactions.data[0]).to.include({ type: 'credit', amount: '25.50', reference_type: 'top_up' });
    const audit = await svc.app.db('audit_log').where({ org_id: org.id, action: 'wallet.top_up' }).first();
    expect(audit.actor).to.equal('staff@platform.example');
    expect(audit.details).to.include({ amount: '25.50', reference: 'INV-7' });
    const txn = await svc.app.db('wallet_transactions').where({ ulid: done.body.data.transaction_ulid }).first();
    expect(txn.reference_id).to.equal('INV-7');
  });

  it('sets the low-balance threshold (owner and admin only)', async () => {
    const { org, web } = await orgWithOwner('business_monthly');
    const res = await web.org(org.ulid).patch('/wallet/settings', { low_balance_threshold: '10.00' });
    expect(res.status).to.equal(200);
    expect(res.body.data.low_balance_threshold).to.equal('10.00');
    await addMember(svc.app, org, 'ed@web.example', 'editor');
    const editor = await signedIn('ed@web.example');
    expect((await editor.org(org.ulid).patch('/wallet/settings', { low_balance_threshold: null })).status).to.equal(
      403,
    );
    expect(
      (await web.org(org.ulid).patch('/wallet/settings', { low_balance_threshold: null })).body.data
        .low_balance_threshold,
    ).to.equal(null);
  });

  it('does not offer dashboard-only operations on REST', async () => {
    const { token } = await orgWithOwner('business_monthly');
    expect((await svc.get('/members', token)).status).to.equal(404);
    expect((await svc.patch('/v1/wallet/settings', token, { low_balance_threshold: null })).status).to.equal(404);
  });
});

describe('code search and paging', function () {
  this.timeout(60_000);
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(() => svc?.close());

  it('finds codes by a piece of name, slug or destination, by status, newest first with a cursor', async () => {
    const { token } = await svc.createOrg({ plan: 'business_monthly' });
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    const specs = [
      { slug: 'spring-sale', name: 'Spring Sale', destination: 'https://shop.example/spring' },
      { slug: 'menu', name: 'Lunch menu', destination: 'https://cafe.example/100%_fresh' },
      { slug: 'poster', name: 'Poster', destination: { url: 'https://SHOP.example/poster' } },
      { slug: 'flyer', name: null, destination: 'https://print.example/flyer' },
    ];
    for (const s of specs)
      expect((await svc.post('/v1/qr-codes', token, { ...s, domain_ulid: domain })).status).to.equal(201);
    const slugs = async (q: string) =>
      (await svc.get(`/v1/qr-codes?limit=10&${q}`, token)).body.data.map((c: any) => c.slug.split('/')[1]);
    expect(await slugs('search=shop')).to.deep.equal(['spring-sale', 'poster']);
    expect(await slugs('search=SALE')).to.deep.equal(['spring-sale']);
    expect(await slugs('search=100%25_')).to.deep.equal(['menu']);
    expect(await slugs('search=_')).to.deep.equal(['menu']);
    expect(await slugs('search=flyer&order=newest')).to.deep.equal(['flyer']);

    const poster = (await svc.get('/v1/qr-codes?search=poster&limit=1', token)).body.data[0];
    await svc.patch(`/v1/qr-codes/${poster.ulid}`, token, { status: 'paused' });
    expect(await slugs('status=paused')).to.deep.equal(['poster']);

    const first = await svc.get('/v1/qr-codes?limit=2&order=newest', token);
    expect(first.body.data.map((c: any) => c.slug.split('/')[1])).to.deep.equal(['flyer', 'poster']);
    const second = await svc.get(`/v1/qr-codes?limit=2&order=newest&cursor=${first.body.meta.next_cursor}`, token);
    expect(second.body.data.map((c: any) => c.slug.split('/')[1])).to.deep.equal(['menu', 'spring-sale']);
    expect(second.body.meta.next_cursor).to.equal(null);
    expect((await svc.get('/v1/qr-codes?order=sideways', token)).status).to.equal(422);
  });
});
