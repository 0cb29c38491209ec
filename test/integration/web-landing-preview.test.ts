// The landing-page preview of the code form (POST /app/api/orgs/{org}/landing-preview): a form post
// carrying the session's CSRF token as a field, answered with the page the redirect would serve for
// the draft, framed by the dashboard only; a draft that is not a page yet lists the fields to mend;
// another organization, a viewer and a missing token get nothing.
import { expect } from 'chai';
import { addMember } from '../../server/organizations/service.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { LANDING_CASES } from '../helpers/landing-cases.js';
import { signedInClient, type WebClient } from '../helpers/web-client.js';

const PASSWORD = 'correct horse battery';

describe('landing-page preview of the code form', function () {
  this.timeout(60_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
  });
  after(() => svc?.close());

  const signedIn = (email: string) => signedInClient(svc.app, svc.url, email, PASSWORD);

  /** Posts the form as the code page does: fields csrf_token and draft. */
  async function preview(web: WebClient, orgUlid: string, draft: unknown, csrf = web.csrf) {
    const res = await fetch(`${svc.url}/app/api/orgs/${orgUlid}/landing-preview`, {
      method: 'POST',
      headers: {
        Cookie: web.cookieHeader(),
        'Content-Type': 'application/x-www-form-urlencoded',
        'Accept-Language': 'de-DE,de;q=0.9',
      },
      body: new URLSearchParams({ csrf_token: csrf, draft: JSON.stringify(draft) }).toString(),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  it('draws the vcard page of an unsaved draft with its own policy, framable by the dashboard only', async () => {
    const t = await svc.createOrg({ plan: 'business_monthly' });
    const web = await signedIn(t.ownerEmail);
    const res = await preview(web, t.org.ulid, {
      type: 'vcard',
      destination: LANDING_CASES.vcard,
      landing_config: { title: 'Meet <Zoë>', theme: { primary_color: '#00695c' } },
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.text).to.contain('<title>Meet &lt;Zoë&gt;</title>');
    expect(res.text).to.contain('#00695c');
    // The visitor's language chooses the page's words, as on a scan.
    expect(res.text).to.match(/<html lang="de">/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).to.contain("frame-ancestors 'self'");
    expect(csp).to.contain("default-src 'none'");
    expect(res.headers.get('x-frame-options')).to.equal('SAMEORIGIN');
    // Nothing is stored by a preview.
    expect((await svc.get('/v1/qr-codes', t.token)).body.data).to.deep.equal([]);
  });

  it('themes the page with the chosen brand’s kit, and refuses another organization’s brand', async () => {
    const t = await svc.createOrg({ plan: 'business_monthly' });
    const other = await svc.createOrg({ plan: 'business_monthly' });
    const web = await signedIn(t.ownerEmail);
    const own = (
      await svc.post('/v1/brands', t.token, { name: 'Roastery', brand_kit: { colors: { primary: '#7b1fa2' } } })
    ).body.data;
    const theirs = (await svc.post('/v1/brands', other.token, { name: 'Theirs' })).body.data;
    const draft = { type: 'links', destination: LANDING_CASES.links };
    const themed = await preview(web, t.org.ulid, { ...draft, brand_ulid: own.ulid });
    expect(themed.status, themed.text).to.equal(200);
    expect(themed.text).to.contain('#7b1fa2');
    const refused = await preview(web, t.org.ulid, { ...draft, brand_ulid: theirs.ulid });
    expect(refused.status).to.equal(422);
    expect(refused.text).to.contain('brand_ulid');
  });

  it('lists what keeps a draft from being a page, escaped, with the same checks as a create', async () => {
    const t = await svc.createOrg({ plan: 'business_monthly' });
    const web = await signedIn(t.ownerEmail);
    const res = await preview(web, t.org.ulid, {
      type: 'event',
      destination: { title: '<b>x</b>', start: '2027-03-28T10:00', end: '2027-03-28T09:00', timezone: 'Mars/Base' },
    });
    expect(res.status).to.equal(422);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.headers.get('content-security-policy')).to.contain("default-src 'none'");
    expect(res.text).to.contain('destination.timezone');
    expect(res.text).to.contain('destination.end');
    expect(res.text).not.to.contain('<b>');
    const links = await preview(web, t.org.ulid, { type: 'links', destination: { title: 'No links' } });
    expect(links.status).to.equal(422);
    expect(links.text).to.contain('links');
  });

  it('needs the session’s CSRF token, a member of the organization, and an ability to write codes', async () => {
    const t = await svc.createOrg({ plan: 'business_monthly' });
    const other = await svc.createOrg({ plan: 'business_monthly' });
    const web = await signedIn(t.ownerEmail);
    const draft = { type: 'app', destination: LANDING_CASES.app };
    expect((await preview(web, t.org.ulid, draft, '')).status).to.equal(403);
    expect((await preview(web, t.org.ulid, draft, 'x'.repeat(43))).status).to.equal(403);
    const notMember = await preview(web, other.org.ulid, draft);
    expect(notMember.status).to.equal(404);
    expect(notMember.text).not.to.contain('Example App');
    await addMember(svc.app, t.org, 'viewer@preview.example', 'viewer');
    const viewer = await signedIn('viewer@preview.example');
    const refused = await preview(viewer, t.org.ulid, draft);
    expect(refused.status).to.equal(403);
    expect(JSON.parse(refused.text).required_ability).to.equal('codes.update');
    // Static types and plain redirects have no page.
    expect((await preview(web, t.org.ulid, { type: 'wifi', destination: { ssid: 'x' } })).status).to.equal(422);
  });
});
