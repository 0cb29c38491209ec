import { expect } from 'chai';
import ICAL from 'ical.js';
import { parse } from 'csv-parse/sync';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { ANDROID, chRows, DESKTOP, FALLBACK, hit, IPHONE } from './redirect-fixtures.js';
import { notifyBarrier, redirectCacheMarker } from '../helpers/notify-barrier.js';
import { toolError, toolOk } from './mcp-helpers.js';
import { LANDING_CASES, PNG_1PX } from '../helpers/landing-cases.js';
import { LINK_ICONS } from '../../server/qr-codes/types.js';

const HOSTILE = '<script>alert(1)</script>"\'><img src=x onerror=alert(2)>';

describe('landing pages: vcard, links, app and event codes answered by the redirect', function () {
  this.timeout(90_000);
  let svc: TestService;
  let rd: RedirectListener;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let n = 0;

  before(async () => {
    svc = await startTestService();
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 50 });
    a = await svc.createOrg({ plan: 'professional_monthly' });
    b = await svc.createOrg({ plan: 'professional_monthly' });
    fallback = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
  });

  async function create(org: TestOrg, type: string, destination: unknown, extra: Record<string, unknown> = {}) {
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug: `l${++n}`,
      type,
      destination,
      domain_ulid: fallback,
      ...extra,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.data as { ulid: string; public_url: string; type: string; trackable: boolean };
  }
  const pathOf = (publicUrl: string) => new URL(publicUrl).pathname;
  const get = (path: string, headers: Record<string, string> = {}) =>
    hit(rd.port, FALLBACK, path, { headers: { 'User-Agent': DESKTOP, ...headers } });

  async function scansOf(codeUlid: string) {
    await rd.scans.flush();
    const id = (await svc.app.db('qr_codes').where({ ulid: codeUlid }).first('id')).id;
    return chRows<Record<string, string | number>>(
      svc.app,
      `SELECT * FROM ${svc.app.ch.database}.scan_events WHERE code_id = {id:UInt64}`,
      { id },
    );
  }

  for (const [type, destination] of Object.entries(LANDING_CASES)) {
    it(`a ${type} code answers its page: strict CSP, noindex, no script, under 30 KB before images, one scan`, async () => {
      const code = await create(a, type, destination);
      expect(code.trackable).to.equal(true);
      const res = await get(pathOf(code.public_url));
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).to.match(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src data:;/);
      expect(csp).to.include("frame-ancestors 'none'");
      expect(res.headers['x-robots-tag']).to.include('noindex');
      expect(res.body).to.include('<meta name="robots" content="noindex, nofollow">');
      expect(res.body).not.to.match(/<script/i);
      // No third-party asset: every src and href is a data: image, our own action, tel:/mailto: or
      // an icon of the page's own sprite.
      for (const [, url] of res.body.matchAll(/(?:src|href)="([^"]*)"/g)) {
        expect(url).to.match(/^(data:image\/png;base64,|\?qr_action=|tel:|mailto:|#i-[a-z]+$)/);
      }
      const withoutImages = res.body.replace(/data:image\/[a-z]+;base64,[A-Za-z0-9+/=]+/g, '');
      expect(Buffer.byteLength(withoutImages)).to.be.below(30 * 1024);
      expect(await scansOf(code.ulid)).to.have.length(1);
    });
  }

  it('draws each link’s icon from the page’s own sprite, once per icon, decorative, and 50 links with icons stay under 30 KB', async () => {
    const code = await create(a, 'links', LANDING_CASES.links);
    const page = (await get(pathOf(code.public_url))).body;
    // One symbol per icon used, each link referring to its own; hidden from assistive technology.
    expect([...page.matchAll(/<symbol id="(i-[a-z]+)"/g)].map((m) => m[1])).to.deep.equal(['i-website', 'i-github']);
    expect(
      [
        ...page.matchAll(
          /<a class="btn alt" href="\?qr_action=link&amp;i=(\d)"><svg class="icon" aria-hidden="true" focusable="false"><use href="#(i-[a-z]+)"\/><\/svg>([^<]*)<\/a>/g,
        ),
      ].map((m) => m.slice(1)),
    ).to.deep.equal([
      ['0', 'i-website', 'Website'],
      ['1', 'i-github', 'GitHub'],
    ]);
    for (const [svg] of page.matchAll(/<svg[^>]*>/g)) expect(svg).to.include('aria-hidden="true"');
    // Every icon of the fixed set, 50 links with long labels: still within the page budget.
    const icons = LINK_ICONS as readonly string[];
    const links = Array.from({ length: 50 }, (_, i) => ({
      label: `A rather long label for link number ${i} of this page`,
      url: `https://example.com/${i}`,
      icon: icons[i % icons.length],
    }));
    const full = await create(a, 'links', { title: 'All', links });
    const html = (await get(pathOf(full.public_url))).body;
    expect(html.match(/<symbol /g)).to.have.length(icons.length);
    expect(html.match(/<use href=/g)).to.have.length(50);
    expect(Buffer.byteLength(html)).to.be.below(30 * 1024);
    // Without icons, no sprite.
    const plain = await create(a, 'links', { title: 'Plain', links: [{ label: 'A', url: 'https://example.com/' }] });
    expect((await get(pathOf(plain.public_url))).body).not.to.include('<svg');
  });

  it('offers the contact as a vCard 4.0 file that ical.js parses back to the same contact', async () => {
    const code = await create(a, 'vcard', LANDING_CASES.vcard);
    const page = await get(pathOf(code.public_url));
    expect(page.body).to.include('href="?qr_action=vcard"');
    const res = await get(`${pathOf(code.public_url)}?qr_action=vcard`);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/vcard; charset=utf-8');
    expect(res.headers['content-disposition']).to.equal('attachment; filename="contact.vcf"');
    for (const line of res.body.split('\r\n')) expect(Buffer.byteLength(line)).to.be.at.most(75);
    const card = new ICAL.Component(ICAL.parse(res.body));
    const value = (name: string) => card.getFirstPropertyValue(name);
    expect(value('version')).to.equal('4.0');
    expect(value('fn')).to.equal('Zoë Müller, "PhD"');
    expect(card.getFirstProperty('n')!.getValues()[0]).to.deep.equal(['Müller', 'Zoë', '', '', '']);
    expect(value('org')).to.equal('ACME; Inc');
    expect(value('tel')).to.equal('tel:+49301234567');
    expect(value('email')).to.equal('zoe@example.com');
    expect(value('url')).to.equal('https://example.com/zo%C3%AB');
    // RFC 6350 3.4: a semicolon in a non-compound value MAY be escaped, and ical.js leaves such an
    // escape in place; every other escape (comma, newline, backslash) it undoes.
    expect(String(value('note')).replace(/\\;/g, ';')).to.equal(LANDING_CASES.vcard.note);
    expect(value('photo')).to.equal(PNG_1PX);
    // The download is an action, not a second scan.
    expect(await scansOf(code.ulid)).to.have.length(1);
  });

  it('offers the event as an RFC 5545 file that ical.js parses back, its times in UTC', async () => {
    const code = await create(a, 'event', LANDING_CASES.event);
    const res = await get(`${pathOf(code.public_url)}?qr_action=ics`);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/calendar; charset=utf-8');
    const cal = new ICAL.Component(ICAL.parse(res.body));
    const event = new ICAL.Event(cal.getFirstSubcomponent('vevent')!);
    expect(event.summary).to.equal('Launch; party, "big"');
    expect(event.location).to.equal('Köln');
    expect(event.description).to.equal('Doors open\nat 1:30');
    // 01:30 is still winter time in Berlin that night (UTC+1); 03:30 is summer time (UTC+2).
    expect(event.startDate.toString()).to.equal('2027-03-28T00:30:00Z');
    expect(event.endDate.toString()).to.equal('2027-03-28T01:30:00Z');
    expect(event.uid).to.include(code.ulid);
  });

  it('sends each link of a links page, each store badge and the website through a recorded 302', async () => {
    const links = await create(a, 'links', LANDING_CASES.links);
    const path = pathOf(links.public_url);
    expect((await get(`${path}?qr_action=link&i=1`)).headers.location).to.equal('https://github.com/example');
    expect((await get(`${path}?qr_action=link&i=2`)).status).to.equal(404);
    expect((await get(`${path}?qr_action=ics`)).status).to.equal(404);
    const app = await create(a, 'app', LANDING_CASES.app);
    const appPath = pathOf(app.public_url);
    expect((await get(`${appPath}?qr_action=play_store`)).headers.location).to.equal(
      'https://play.google.com/store/apps/details?id=com.example',
    );
    expect((await get(`${appPath}?qr_action=website`)).headers.location).to.equal('https://example.com/app');
  });

  it('sends iOS and Android visitors of an app code straight to their store (a scan each), others see both badges', async () => {
    const app = await create(a, 'app', LANDING_CASES.app);
    const path = pathOf(app.public_url);
    const ios = await get(path, { 'User-Agent': IPHONE });
    expect(ios.status).to.equal(302);
    expect(ios.headers.location).to.equal('https://apps.apple.com/app/id123456789');
    const android = await get(path, { 'User-Agent': ANDROID });
    expect(android.headers.location).to.equal('https://play.google.com/store/apps/details?id=com.example');
    const desktop = await get(path);
    expect(desktop.status).to.equal(200);
    expect(desktop.body).to.include('?qr_action=app_store').and.include('?qr_action=play_store');
    expect(await scansOf(app.ulid)).to.have.length(3);
  });

  it('speaks the visitor’s language (en, de, fr, es) unless landing_config fixes it, and uses its labels', async () => {
    const code = await create(a, 'vcard', { name: 'Ada' });
    const path = pathOf(code.public_url);
    const de = await get(path, { 'Accept-Language': 'nl;q=0.9, de-DE;q=0.8, en;q=0.1' });
    expect(de.body).to.include('<html lang="de">').and.include('Zu Kontakten hinzufügen');
    expect(de.headers['content-language']).to.equal('de');
    expect((await get(path, { 'Accept-Language': 'fr-CA' })).body).to.include('Ajouter aux contacts');
    expect((await get(path, { 'Accept-Language': 'es' })).body).to.include('Añadir a contactos');
    expect((await get(path, { 'Accept-Language': 'ja' })).body).to.include('Add to contacts');
    const fixed = await create(
      a,
      'vcard',
      { name: 'Ada' },
      {
        landing_config: { language: 'fr', button_labels: { save_contact: 'Enregistrer Ada' } },
      },
    );
    const res = await get(pathOf(fixed.public_url), { 'Accept-Language': 'de' });
    expect(res.body).to.include('<html lang="fr">').and.include('Enregistrer Ada');
  });

  it('themes the page from landing_config, else from the brand kit', async () => {
    const brand = await svc.post('/v1/brands', a.token, {
      name: 'Kit',
      brand_kit: { colors: { primary: '#7b1fa2' }, logo: PNG_1PX },
    });
    expect(brand.status, brand.text).to.equal(201);
    const kit = await create(a, 'links', LANDING_CASES.links, { brand_ulid: brand.body.data.ulid });
    const page = await get(pathOf(kit.public_url));
    expect(page.body).to.include('background:#7b1fa2').and.include(`<header><img src="${PNG_1PX}" alt=""></header>`);
    const own = await create(a, 'links', LANDING_CASES.links, {
      brand_ulid: brand.body.data.ulid,
      landing_config: { theme: { primary_color: '#004d40' } },
    });
    expect((await get(pathOf(own.public_url))).body).to.include('background:#004d40');
  });

  it('renders hostile text inert: escaped everywhere, never markup', async () => {
    const code = await create(
      a,
      'links',
      {
        title: HOSTILE,
        description: HOSTILE,
        links: [{ label: HOSTILE, url: 'https://example.com/?q=%3Cscript%3E' }],
      },
      { landing_config: { title: HOSTILE, description: HOSTILE, button_labels: { save_contact: HOSTILE } } },
    );
    const res = await get(pathOf(code.public_url));
    expect(res.status).to.equal(200);
    expect(res.body).not.to.include('<script>');
    expect(res.body).not.to.include('<img src=x');
    expect(res.body).to.include(
      '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x onerror=alert(2)&gt;',
    );
    const vcard = await create(a, 'vcard', { name: HOSTILE, note: HOSTILE, address: { street: HOSTILE } });
    const page = await get(pathOf(vcard.public_url));
    expect(page.body).not.to.match(/<script|<img src=x/);
  });

  it('applies password, expiry and scan cap to a landing page like to a redirect', async () => {
    const capped = await create(a, 'vcard', { name: 'Capped' }, { redirect_cap: 1 });
    const path = pathOf(capped.public_url);
    expect((await get(path)).status).to.equal(200);
    await rd.scans.flush();
    const second = await get(path);
    expect(second.status).to.equal(410);
    expect(second.body).to.include('limit of visits');
    const expired = await create(a, 'event', LANDING_CASES.event, { expire_at: '2020-01-01T00:00:00Z' });
    expect((await get(pathOf(expired.public_url))).status).to.equal(410);
    const locked = await create(a, 'links', LANDING_CASES.links, { password: 'open sesame' });
    const form = await get(pathOf(locked.public_url));
    expect(form.body).to.include('type="password"');
    // An action without the password cookie gets the form too, never the target.
    const action = await get(`${pathOf(locked.public_url)}?qr_action=link&i=0`);
    expect(action.status).to.equal(200);
    expect(action.headers.location).to.equal(undefined);
    const ok = await hit(rd.port, FALLBACK, pathOf(locked.public_url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': DESKTOP },
      body: 'password=open+sesame',
    });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include('?qr_action=link&amp;i=0');
    expect(String(ok.headers['set-cookie'])).to.match(/HttpOnly/);
    expect(await scansOf(locked.ulid)).to.have.length(1);
  });

  it('shows a prelander before the page, and the page after it is not a second scan', async () => {
    const code = await create(a, 'vcard', { name: 'Pre' }, { prelander_enabled: true, prelander_seconds: 0 });
    const path = pathOf(code.public_url);
    const pre = await get(path);
    expect(pre.body).to.include('href="?qr_action=page"');
    const page = await get(`${path}?qr_action=page`);
    expect(page.body).to.include('Add to contacts');
    expect(await scansOf(code.ulid)).to.have.length(1);
  });

  it('answers a static code’s public URL with 404 and records nothing', async () => {
    const wifi = await svc.post('/v1/qr-codes', a.token, {
      slug: `s${++n}`,
      type: 'wifi',
      destination: { ssid: 'Guest', encryption: 'nopass' },
      domain_ulid: fallback,
    });
    expect((await get(pathOf(wifi.body.data.public_url))).status).to.equal(404);
    expect(await scansOf(wifi.body.data.ulid)).to.have.length(0);
  });

  it('serves a changed landing page at once after an update (the cache follows)', async () => {
    const code = await create(a, 'vcard', { name: 'Before' });
    const path = pathOf(code.public_url);
    expect((await get(path)).body).to.include('Before');
    await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, { destination: { name: 'After' } });
    await notifyBarrier(svc.app, 'redirect_cache', redirectCacheMarker());
    expect((await get(path)).body).to.include('After');
  });

  it('records each action once as a scan action, in the code’s analytics (REST and MCP) with distinct visitors', async () => {
    const code = await create(a, 'links', LANDING_CASES.links);
    const path = pathOf(code.public_url);
    const other = { 'User-Agent': IPHONE, 'X-Forwarded-For': '203.0.113.9' };
    await get(path);
    await get(`${path}?qr_action=link&i=0`);
    await get(`${path}?qr_action=link&i=1`);
    await get(`${path}?qr_action=link&i=1`);
    await get(`${path}?qr_action=link&i=1`, other);
    // A HEAD is not a visit, and an action the page does not offer records nothing.
    await hit(rd.port, FALLBACK, `${path}?qr_action=link&i=0`, { method: 'HEAD', headers: { 'User-Agent': DESKTOP } });
    await get(`${path}?qr_action=link&i=9`);
    await rd.scans.flush();
    await rd.actions.flush();
    const rest = await svc.get(`/v1/analytics/qr-codes/${code.ulid}`, a.token);
    expect(rest.status, rest.text).to.equal(200);
    expect(rest.body.data.totals.scans).to.equal(1);
    expect(rest.body.data.actions).to.deep.equal([{ action: 'link', count: 4, unique_visitors: 2 }]);
    const id = (await svc.app.db('qr_codes').where({ ulid: code.ulid }).first('id')).id;
    const rows = await chRows<{ action: string; target: number }>(
      svc.app,
      `SELECT action, target FROM ${svc.app.ch.database}.scan_actions WHERE code_id = {id:UInt64} ORDER BY scanned_at, action_id`,
      { id },
    );
    expect(rows.map((r) => Number(r.target))).to.deep.equal([0, 1, 1, 1]);
    const mcp = await toolOk(svc, a.token, 'analytics_code_read', { code_ulid: code.ulid });
    expect(mcp.data.actions).to.deep.equal(rest.body.data.actions);
    // Another organization sees none of it.
    expect((await svc.get(`/v1/analytics/qr-codes/${code.ulid}`, b.token)).status).to.equal(404);
  });

  it('shows the actions as a breakdown (dimension=action), in the CSV export and in the raw export, to their organization only', async () => {
    // A fresh organization: the raw export has its own window of 6 requests a minute.
    const c = await svc.createOrg({ plan: 'professional_monthly' });
    const code = await create(c, 'links', LANDING_CASES.links);
    const card = await create(c, 'vcard', LANDING_CASES.vcard);
    const path = pathOf(code.public_url);
    const other = { 'User-Agent': IPHONE, 'X-Forwarded-For': '203.0.113.10' };
    await get(path);
    await get(`${path}?qr_action=link&i=1`);
    await get(`${path}?qr_action=link&i=0`, other);
    await get(`${path}?qr_action=link&i=1`, other);
    await hit(rd.port, FALLBACK, `${path}?qr_action=link&i=0`, { headers: { 'User-Agent': 'curl/8.5.0' } });
    await get(`${pathOf(card.public_url)}?qr_action=vcard`);
    // Another organization's visitors act on its own code: none of it reaches c.
    const foreign = await create(b, 'links', LANDING_CASES.links);
    await get(`${pathOf(foreign.public_url)}?qr_action=link&i=0`);
    await rd.scans.flush();
    await rd.actions.flush();

    const perCode = await svc.get(`/v1/analytics/qr-codes/${code.ulid}?dimension=action`, c.token);
    expect(perCode.status, perCode.text).to.equal(200);
    expect(perCode.body.data.dimension_label).to.equal('Landing-page action');
    expect(perCode.body.data.dimension_breakdown).to.deep.equal([{ key: 'link', label: 'Link', scans: 3, uniques: 2 }]);
    const org = await svc.get('/v1/analytics/export?dimension=action', c.token);
    expect(org.status, org.text).to.equal(200);
    expect(org.body.data.dimension_breakdown).to.deep.equal([
      { key: 'link', label: 'Link', scans: 3, uniques: 2 },
      { key: 'vcard', label: 'Contact download', scans: 1, uniques: 1 },
    ]);
    const today = new Date().toISOString().slice(0, 10);
    expect(org.body.data.csv_rows).to.deep.equal([
      { date: today, action: 'Link', scans: 3 },
      { date: today, action: 'Contact download', scans: 1 },
    ]);
    const csv = await svc.get('/v1/analytics/export?dimension=action', c.token, { Accept: 'text/csv' });
    expect(csv.headers.get('content-disposition')).to.equal(
      'attachment; filename="analytics-organization-30d-action.csv"',
    );
    expect(parse(csv.text, { columns: true })).to.deep.equal([
      { date: today, action: 'Link', scans: '3' },
      { date: today, action: 'Contact download', scans: '1' },
    ]);
    // Bots count when asked, as everywhere.
    const withBots = await svc.get(`/v1/analytics/qr-codes/${code.ulid}?dimension=action&include_bots=true`, c.token);
    expect(withBots.body.data.dimension_breakdown[0]).to.include({ key: 'link', scans: 4 });
    const mcp = await toolOk(svc, c.token, 'analytics_export', { dimension: 'action' });
    expect(mcp.data.csv_rows).to.deep.equal(org.body.data.csv_rows);

    // The raw export: one row per action, paged through the cursor like the scans.
    const first = await svc.get(`/v1/analytics/qr-codes/${code.ulid}/raw-export?kind=actions&limit=2`, c.token);
    expect(first.status, first.text).to.equal(200);
    expect(first.body.data.meta).to.include({ count: 2, has_more: true });
    const scan = await svc.get(`/v1/analytics/qr-codes/${code.ulid}/raw-export`, c.token);
    const visitor = scan.body.data.rows[0].visitor_id;
    expect(first.body.data.rows[0]).to.deep.include({ action: 'link', target: 1, visitor_id: visitor, bot: false });
    expect(first.body.data.rows[0]).to.have.keys('action_id', 'scanned_at', 'action', 'target', 'visitor_id', 'bot');
    const rest = await svc.get(
      `/v1/analytics/qr-codes/${code.ulid}/raw-export?kind=actions&include_bots=true&cursor=${first.body.data.meta.next_cursor}`,
      c.token,
      { Accept: 'text/csv' },
    );
    expect(rest.status, rest.text).to.equal(200);
    expect(rest.headers.get('content-disposition')).to.match(/filename="actions-/);
    expect(rest.headers.get('x-has-more')).to.equal('false');
    const rows = parse(rest.text, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.action, r.target, r.bot])).to.deep.equal([
      ['link', '1', 'false'],
      ['link', '0', 'true'],
    ]);
    expect(Object.keys(rows[0])).to.deep.equal(['action_id', 'scanned_at', 'action', 'target', 'visitor_id', 'bot']);
    const vcard = await svc.get(`/v1/analytics/qr-codes/${card.ulid}/raw-export?kind=actions`, c.token);
    expect(vcard.body.data.rows.map((r: { action: string; target: unknown }) => [r.action, r.target])).to.deep.equal([
      ['vcard', null],
    ]);
    const bad = await svc.get(`/v1/analytics/qr-codes/${code.ulid}/raw-export?kind=clicks`, c.token);
    expect(bad.status).to.equal(422);

    // Another organization: 404 on the code, and its own breakdown holds only its own actions.
    expect((await svc.get(`/v1/analytics/qr-codes/${code.ulid}/raw-export?kind=actions`, b.token)).status).to.equal(
      404,
    );
    const theirs = await svc.get('/v1/analytics?dimension=action', b.token);
    expect(theirs.body.data.dimension_breakdown).to.deep.equal([{ key: 'link', label: 'Link', scans: 1, uniques: 1 }]);
  });

  it('a static code has no analytics: 422 saying why, not zeros', async () => {
    const geo = await svc.post('/v1/qr-codes', a.token, {
      slug: `g${++n}`,
      type: 'geo',
      destination: { latitude: 48.8584, longitude: 2.2945 },
      domain_ulid: fallback,
    });
    const res = await svc.get(`/v1/analytics/qr-codes/${geo.body.data.ulid}`, a.token);
    expect(res.status).to.equal(422);
    expect(res.body.errors.code_ulid[0]).to.match(/static/);
    const org = await svc.get(`/v1/analytics?code_ulid=${geo.body.data.ulid}`, a.token);
    expect(org.status).to.equal(422);
  });

  it('creates and changes every type through MCP tools, with the REST rules and messages', async () => {
    for (const [type, destination] of Object.entries(LANDING_CASES)) {
      const made = await toolOk(svc, a.token, 'codes_create', {
        slug: `m${++n}`,
        type,
        destination,
        domain_ulid: fallback,
      });
      expect(made.data.type).to.equal(type);
      expect((await get(pathOf(made.data.public_url))).status).to.be.oneOf([200]);
    }
    const wifi = await toolOk(svc, a.token, 'codes_create', {
      slug: `m${++n}`,
      type: 'wifi',
      destination: { ssid: 'Cafe', password: 'secret12' },
      domain_ulid: fallback,
    });
    expect(wifi.data.trackable).to.equal(false);
    const refused = await toolError(svc, a.token, 'codes_update', {
      code_ulid: wifi.data.ulid,
      type: 'vcard',
      destination: { name: 'X' },
    });
    expect(refused.errors.type[0]).to.match(/dynamic type and a static one/);
    const bad = await toolError(svc, a.token, 'codes_create', {
      slug: `m${++n}`,
      type: 'event',
      destination: { title: 'x' },
      domain_ulid: fallback,
    });
    expect(bad.errors).to.have.property('destination.start');
  });

  it('another organization cannot read or change a landing-page code', async () => {
    const code = await create(a, 'event', LANDING_CASES.event);
    expect((await svc.get(`/v1/qr-codes/${code.ulid}`, b.token)).status).to.equal(404);
    expect((await svc.patch(`/v1/qr-codes/${code.ulid}`, b.token, { landing_config: { title: 'x' } })).status).to.equal(
      404,
    );
  });
});
