import { expect } from 'chai';
import { ulid } from 'ulid';
import type { OrgRecord } from '../../server/auth/principal.js';
import { verifyPassword } from '../../server/qr-codes/password.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

describe('QR codes: /v1/qr-codes', () => {
  let svc: TestService;
  let fallback: { ulid: string; origin: string; host: string };
  let a: TestOrg;
  let b: TestOrg;

  async function customDomain(org: OrgRecord, host: string, status = 'active'): Promise<string> {
    const id = ulid();
    await svc.app
      .db('domains')
      .insert({ ulid: id, org_id: org.id, host, type: 'custom', status, ssl_status: 'pending' });
    return id;
  }
  async function brand(org: OrgRecord, name: string): Promise<string> {
    const id = ulid();
    await svc.app.db('brands').insert({ ulid: id, org_id: org.id, name, slug: name.toLowerCase().replace(/\W/g, '-') });
    return id;
  }
  async function style(org: OrgRecord, name: string): Promise<string> {
    const id = ulid();
    await svc.app
      .db('qr_styles')
      .insert({ ulid: id, org_id: org.id, name, config: JSON.stringify({ dots: 'square' }) });
    return id;
  }
  const plain = (slug: string, extra: Record<string, unknown> = {}) => ({
    slug,
    destination: 'https://example.com/landing',
    domain_ulid: fallback.ulid,
    ...extra,
  });

  before(async () => {
    svc = await startTestService();
    const row = await svc.app.db('domains').where({ type: 'fallback' }).first('ulid', 'origin', 'host');
    fallback = row;
    a = await svc.createOrg({ plan: 'professional_monthly', slug: 'acme' });
    b = await svc.createOrg({ plan: 'professional_monthly', slug: 'other' });
  });
  after(() => svc.close());

  describe('POST /v1/qr-codes', () => {
    it('creates a plain code with every field of the payload, null or false for the further fields', async () => {
      const res = await svc.post('/v1/qr-codes', a.token, plain('spring', { name: 'Spring flyer' }));
      expect(res.status).to.equal(201);
      const d = res.body.data;
      expect(d.ulid).to.match(/^[0-9A-Z]{26}$/);
      const { ulid: _u, created_at, updated_at, ...rest } = d;
      expect(created_at).to.equal(updated_at);
      expect(rest).to.deep.equal({
        name: 'Spring flyer',
        slug: 'acme/spring',
        type: 'url',
        trackable: true,
        status: 'active',
        public_url: `${fallback.origin}/acme/spring`,
        destination: 'https://example.com/landing',
        routing: null,
        schedule: null,
        password: false,
        redirects_count: 0,
        brand: null,
        domain: { ulid: fallback.ulid, host: fallback.host },
        style: null,
        date_begin: null,
        expire_at: null,
        redirect_cap: null,
        utm_params: null,
        device_routing: null,
        language_routing: null,
        tracking_pixels: null,
        conversion_tracking: false,
        custom_js: null,
        landing_config: null,
        prelander_enabled: false,
        prelander_seconds: null,
        prelander_message: null,
        settings: {},
      });
    });

    it('echoes a destination object, stores the redirect type as url, links brand and style, and uses https://host/slug on a custom domain', async () => {
      const dom = await customDomain(a.org, 'go.acme.test');
      const br = await brand(a.org, 'Acme Red');
      const st = await style(a.org, 'Round');
      const res = await svc.post('/v1/qr-codes', a.token, {
        slug: 'Summer_2026-x',
        destination: { url: 'http://example.org/a?b=1' },
        domain_ulid: dom,
        brand_ulid: br,
        style_ulid: st,
        type: 'redirect',
        status: 'paused',
        date_begin: '2026-01-01T00:00:00Z',
        expire_at: '2026-12-31T00:00:00.000Z',
        utm_params: { source: 'flyer', utm_medium: 'print' },
        prelander_enabled: true,
        prelander_seconds: 5,
        prelander_message: 'One moment',
      });
      expect(res.status).to.equal(201);
      const d = res.body.data;
      expect(d.type).to.equal('url');
      expect(d.status).to.equal('paused');
      expect(d.slug).to.equal('acme/Summer_2026-x');
      expect(d.public_url).to.equal('https://go.acme.test/Summer_2026-x');
      expect(d.destination).to.deep.equal({ url: 'http://example.org/a?b=1' });
      expect(d.brand).to.deep.equal({ ulid: br, name: 'Acme Red' });
      expect(d.style).to.deep.equal({ ulid: st, name: 'Round' });
      expect(d.domain).to.deep.equal({ ulid: dom, host: 'go.acme.test' });
      expect(d.date_begin).to.equal('2026-01-01T00:00:00.000Z');
      expect(d.expire_at).to.equal('2026-12-31T00:00:00.000Z');
      expect(d.utm_params).to.deep.equal({ source: 'flyer', utm_medium: 'print' });
      expect([d.prelander_enabled, d.prelander_seconds, d.prelander_message]).to.deep.equal([true, 5, 'One moment']);
      const stored = await svc.app.db('qr_codes').where({ ulid: d.ulid }).first('type');
      expect(stored.type).to.equal('url');
    });

    it('accepts a pending custom domain of the organization', async () => {
      const dom = await customDomain(a.org, 'pending.acme.test', 'pending');
      const res = await svc.post('/v1/qr-codes', a.token, plain('on-pending', { domain_ulid: dom }));
      expect(res.status).to.equal(201);
      expect(res.body.data.public_url).to.equal('https://pending.acme.test/on-pending');
    });

    it('stores routing and schedule in the shape the redirect evaluates, and the password as a scrypt hash', async () => {
      const routing = {
        rules: [
          { conditions: { device: ['mobile'], os: ['iOS'] }, destination: 'https://apps.apple.com/x' },
          {
            conditions: { country: ['DE', 'AT'], language: ['de'] },
            variants: [
              { destination: 'https://a.example/de', weight: 3 },
              { destination: 'https://b.example/de', weight: 1 },
            ],
          },
          { conditions: {}, destination: 'https://example.com/all' },
        ],
      };
      const schedule = {
        enabled: true,
        timezone: 'Europe/Berlin',
        windows: [
          { days: ['mon', 'fri'], start: '09:00', end: '17:30' },
          { days: ['sat'], start: '22:00', end: '02:00' },
        ],
        fallback_destination: 'https://example.com/closed',
      };
      const res = await svc.post(
        '/v1/qr-codes',
        a.token,
        plain('rules', { routing, schedule, password: 's3cret', redirect_cap: 500 }),
      );
      expect(res.status).to.equal(201);
      expect(res.body.data.routing).to.deep.equal(routing);
      expect(res.body.data.schedule).to.deep.equal(schedule);
      expect(res.body.data.password).to.equal(true);
      expect(res.body.data.redirect_cap).to.equal(500);
      const row = await svc.app
        .db('qr_codes')
        .where({ ulid: res.body.data.ulid })
        .first('password_hash', 'routing', 'schedule');
      expect(row.password_hash).to.match(/^scrypt\$/);
      expect(await verifyPassword('s3cret', row.password_hash)).to.equal(true);
      expect(await verifyPassword('wrong', row.password_hash)).to.equal(false);
      expect(row.routing).to.deep.equal(routing);
    });

    const invalid: [string, Record<string, unknown>, string, RegExp][] = [
      ['slug missing', { slug: undefined }, 'slug', /required/],
      ['slug with a slash', { slug: 'a/b' }, 'slug', /1 to 64 characters of A-Z/],
      ['slug of 65 characters', { slug: 'x'.repeat(65) }, 'slug', /1 to 64 characters of A-Z/],
      ['empty slug', { slug: '' }, 'slug', /1 to 64 characters of A-Z/],
      ['destination missing', { destination: undefined }, 'destination', /required/],
      ['ftp destination', { destination: 'ftp://example.com' }, 'destination', /http or https URL/],
      ['destination not a URL', { destination: 'https://exa mple.com' }, 'destination', /URL/],
      ['destination too long', { destination: 'https://example.com/' + 'a'.repeat(2040) }, 'destination', /2048/],
      ['destination object without url', { destination: { href: 'https://x.com' } }, 'destination.url', /required/],
      [
        'destination object with ftp url',
        { destination: { url: 'ftp://x.com' } },
        'destination.url',
        /http or https URL/,
      ],
      ['destination URL without a host', { destination: 'http://' }, 'destination', /URL/],
      ['domain_ulid missing', { domain_ulid: undefined }, 'domain_ulid', /required.*GET \/v1\/domains/],
      ['malformed domain_ulid', { domain_ulid: 'nope' }, 'domain_ulid', /Must be a ULID/],
      ['unknown domain', { domain_ulid: ulid() }, 'domain_ulid', /No such domain/],
      ['unknown brand', { brand_ulid: ulid() }, 'brand_ulid', /No such brand/],
      ['unknown style', { style_ulid: ulid() }, 'style_ulid', /No such style/],
      ['unknown type', { type: 'nfc' }, 'type', /url, vcard, links/],
      ['unknown status', { status: 'deleted' }, 'status', /active, paused, archived/],
      ['unknown field', { owner_id: 5 }, 'owner_id', /not allowed/],
      ['redirect_cap 0', { redirect_cap: 0 }, 'redirect_cap', /at least 1/],
      [
        'expire_at before date_begin',
        { date_begin: '2026-05-01T00:00:00Z', expire_at: '2026-04-01T00:00:00Z' },
        'expire_at',
        /after date_begin/,
      ],
      [
        'expire_at equal to date_begin',
        { date_begin: '2026-05-01T00:00:00Z', expire_at: '2026-05-01T00:00:00Z' },
        'expire_at',
        /after date_begin/,
      ],
      ['date_begin not a date-time', { date_begin: 'tomorrow' }, 'date_begin', /date-time/],
      ['date_begin in year 0', { date_begin: '0000-06-01T00:00:00Z' }, 'date_begin', /date-time/],
      ['a leap-second expire_at', { expire_at: '2026-06-30T23:59:60Z' }, 'expire_at', /date-time/],
      ['a NUL character in the name', { name: 'a\u0000b' }, 'name', /NUL/],
      ['a NUL character in a utm key', { utm_params: { 'a\u0000': 'x' } }, 'utm_params', /Property name/],
      ['utm_params with a number', { utm_params: { source: 5 } }, 'utm_params.source', /string/],
      [
        'schedule with an unknown time zone',
        {
          schedule: {
            enabled: true,
            timezone: 'Mars/Olympus',
            windows: [{ days: ['mon'], start: '09:00', end: '10:00' }],
          },
        },
        'schedule.timezone',
        /IANA/,
      ],
      [
        'schedule without windows',
        { schedule: { enabled: true, timezone: 'UTC', windows: [] } },
        'schedule.windows',
        /at least one window/,
      ],
      [
        'schedule with a bad day',
        { schedule: { enabled: true, timezone: 'UTC', windows: [{ days: ['monday'], start: '09:00', end: '10:00' }] } },
        'schedule.windows.0.days.0',
        /mon, tue/,
      ],
      [
        'schedule with a bad time',
        { schedule: { enabled: true, timezone: 'UTC', windows: [{ days: ['mon'], start: '9:00', end: '25:00' }] } },
        'schedule.windows.0.start',
        /HH:MM/,
      ],
      [
        'schedule with start equal to end',
        { schedule: { enabled: true, timezone: 'UTC', windows: [{ days: ['mon'], start: '09:00', end: '09:00' }] } },
        'schedule.windows.0.end',
        /differ/,
      ],
      ['routing without rules', { routing: {} }, 'routing.rules', /required/],
      [
        'routing rule without destination',
        { routing: { rules: [{ conditions: { device: ['mobile'] } }] } },
        'routing.rules.0',
        /destination or variants/,
      ],
      [
        'routing rule with an unknown device',
        { routing: { rules: [{ conditions: { device: ['phone'] }, destination: 'https://x.com' }] } },
        'routing.rules.0.conditions.device.0',
        /mobile/,
      ],
      [
        'routing rule with a bad country',
        { routing: { rules: [{ conditions: { country: ['DEU'] }, destination: 'https://x.com' }] } },
        'routing.rules.0.conditions.country.0',
        /ISO 3166-1 alpha-2/,
      ],
      [
        'routing variant with weight 0',
        { routing: { rules: [{ conditions: {}, variants: [{ destination: 'https://x.com', weight: 0 }] }] } },
        'routing.rules.0.variants.0.weight',
        /at least 1/,
      ],
    ];
    for (const [what, change, field, message] of invalid) {
      it(`answers 422 on ${field} for ${what}`, async () => {
        const body: Record<string, unknown> = plain(`inv-${Math.random().toString(36).slice(2, 8)}`, change);
        for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
        const before = await svc.app.db('qr_codes').count<{ count: string }[]>('* as count');
        const res = await svc.post('/v1/qr-codes', a.token, body);
        expect(res.status, res.text).to.equal(422);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.errors, res.text).to.have.property(field);
        expect(res.body.errors[field].join(' ')).to.match(message);
        const afterCount = await svc.app.db('qr_codes').count<{ count: string }[]>('* as count');
        expect(afterCount[0].count).to.equal(before[0].count);
      });
    }

    it('answers 422 when the slug is taken in the organization, case-insensitively, and allows it in another organization', async () => {
      expect((await svc.post('/v1/qr-codes', a.token, plain('Taken'))).status).to.equal(201);
      const again = await svc.post('/v1/qr-codes', a.token, plain('tAKEN'));
      expect(again.status).to.equal(422);
      expect(again.body.errors).to.deep.equal({ slug: ['The slug has already been taken.'] });
      expect((await svc.post('/v1/qr-codes', b.token, plain('taken'))).status).to.equal(201);
    });

    it('answers 422 for a domain, brand or style of another organization', async () => {
      const dom = await customDomain(b.org, 'b-only.test');
      const br = await brand(b.org, 'B brand');
      const st = await style(b.org, 'B style');
      const res = await svc.post('/v1/qr-codes', a.token, plain('foreign', { domain_ulid: dom }));
      expect(res.body.errors).to.deep.equal({ domain_ulid: ['No such domain in this organization.'] });
      const res2 = await svc.post('/v1/qr-codes', a.token, plain('foreign', { brand_ulid: br, style_ulid: st }));
      expect(res2.status).to.equal(422);
      expect(res2.body.errors).to.deep.equal({
        brand_ulid: ['No such brand in this organization.'],
        style_ulid: ['No such style in this organization.'],
      });
    });
  });

  describe('plan gating', () => {
    const gated: [string, Record<string, unknown>, string][] = [
      ['redirect_cap', { redirect_cap: 10 }, 'starter_monthly'],
      ['routing', { routing: { rules: [] } }, 'starter_monthly'],
      ['schedule', { schedule: { enabled: false } }, 'starter_monthly'],
      ['password', { password: 'pw' }, 'business_monthly'],
    ];
    for (const [feature, field, plan] of gated) {
      it(`refuses ${feature} on ${plan} with 403 feature_not_in_plan on create and update`, async () => {
        const org = await svc.createOrg({ plan, balanceMinor: 10_000 });
        const res = await svc.post('/v1/qr-codes', org.token, plain(`g-${feature}`, field));
        expect(res.status).to.equal(403);
        expect(res.body).to.deep.include({ code: 'feature_not_in_plan', feature });
        const ok = await svc.post('/v1/qr-codes', org.token, plain(`g-${feature}`));
        expect(ok.status).to.equal(201);
        const patch = await svc.patch(`/v1/qr-codes/${ok.body.data.ulid}`, org.token, field);
        expect(patch.status).to.equal(403);
        expect(patch.body.feature).to.equal(feature);
        // Clearing a gated key needs no feature.
        const clear = await svc.patch(`/v1/qr-codes/${ok.body.data.ulid}`, org.token, { [feature]: null });
        expect(clear.status).to.equal(200);
      });
    }

    it('allows redirect_cap, routing and schedule on business and password on professional', async () => {
      const biz = await svc.createOrg({ plan: 'business_monthly' });
      const res = await svc.post(
        '/v1/qr-codes',
        biz.token,
        plain('biz', { redirect_cap: 3, routing: { rules: [] }, schedule: { enabled: false } }),
      );
      expect(res.status).to.equal(201);
      const pro = await svc.post('/v1/qr-codes', a.token, plain('pro-pw', { password: 'x' }));
      expect(pro.status).to.equal(201);
    });
  });

  describe('GET, PATCH, DELETE', () => {
    it('reads one code', async () => {
      const created = (await svc.post('/v1/qr-codes', a.token, plain('read-me'))).body.data;
      const res = await svc.get(`/v1/qr-codes/${created.ulid}`, a.token);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal(created);
    });

    it('takes ULIDs in any case, in the path and in the body', async () => {
      const st = await style(a.org, 'Lower');
      const created = await svc.post(
        '/v1/qr-codes',
        a.token,
        plain('lower-refs', { domain_ulid: fallback.ulid.toLowerCase(), style_ulid: st.toLowerCase() }),
      );
      expect(created.status).to.equal(201);
      expect(created.body.data.style).to.deep.equal({ ulid: st, name: 'Lower' });
      const res = await svc.get(`/v1/qr-codes/${created.body.data.ulid.toLowerCase()}`, a.token);
      expect(res.body.data.ulid).to.equal(created.body.data.ulid);
    });

    it('PATCH changes only the given keys and clears keys set to null', async () => {
      const br = await brand(a.org, 'Patch brand');
      const created = (
        await svc.post(
          '/v1/qr-codes',
          a.token,
          plain('patch-me', { name: 'Before', brand_ulid: br, redirect_cap: 9, utm_params: { source: 'x' } }),
        )
      ).body.data;
      svc.clock.advance(5000);
      const res = await svc.patch(`/v1/qr-codes/${created.ulid}`, a.token, {
        destination: { url: 'https://new.example/' },
        status: 'archived',
        redirect_cap: null,
      });
      svc.clock.reset();
      expect(res.status).to.equal(200);
      const d = res.body.data;
      expect(d.destination).to.deep.equal({ url: 'https://new.example/' });
      expect(d.status).to.equal('archived');
      expect(d.redirect_cap).to.equal(null);
      expect(d.name).to.equal('Before');
      expect(d.brand).to.deep.equal({ ulid: br, name: 'Patch brand' });
      expect(d.utm_params).to.deep.equal({ source: 'x' });
      expect(d.slug).to.equal('acme/patch-me');
      expect(new Date(d.updated_at).getTime()).to.be.greaterThan(new Date(created.updated_at).getTime());
      const noop = await svc.patch(`/v1/qr-codes/${created.ulid}`, a.token, {});
      expect(noop.body.data.status).to.equal('archived');
      const renamed = await svc.patch(`/v1/qr-codes/${created.ulid}`, a.token, {
        slug: 'patched',
        brand_ulid: null,
        name: null,
        password: 'pw',
        type: 'redirect',
      });
      expect(renamed.body.data).to.deep.include({
        slug: 'acme/patched',
        brand: null,
        name: null,
        password: true,
        type: 'url',
      });
    });

    it('PATCH refuses a NUL character and an impossible date with 422 and changes nothing', async () => {
      const code = (await svc.post('/v1/qr-codes', a.token, plain('nul-patch', { name: 'kept' }))).body.data;
      const nul = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, { name: 'x\u0000' });
      expect(nul.status).to.equal(422);
      expect(nul.body.errors).to.deep.equal({ name: ['Must not contain NUL characters or unpaired surrogates.'] });
      const leap = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, {
        expire_at: '2026-06-30T23:59:60Z',
        name: 'changed',
      });
      expect(leap.status).to.equal(422);
      expect((await svc.get(`/v1/qr-codes/${code.ulid}`, a.token)).body.data).to.deep.equal(code);
    });

    it('PATCH validates like POST: slug taken, dates against stored values, foreign references', async () => {
      await svc.post('/v1/qr-codes', a.token, plain('occupied'));
      const code = (await svc.post('/v1/qr-codes', a.token, plain('mover', { expire_at: '2026-06-01T00:00:00Z' }))).body
        .data;
      const taken = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, { slug: 'OCCUPIED' });
      expect(taken.status).to.equal(422);
      expect(taken.body.errors).to.deep.equal({ slug: ['The slug has already been taken.'] });
      const self = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, { slug: 'Mover' });
      expect(self.status).to.equal(200);
      const late = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, { date_begin: '2026-07-01T00:00:00Z' });
      expect(late.status).to.equal(422);
      expect(late.body.errors).to.have.property('expire_at');
      const dom = await customDomain(b.org, 'b-patch.test');
      const foreign = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, { domain_ulid: dom });
      expect(foreign.body.errors).to.deep.equal({ domain_ulid: ['No such domain in this organization.'] });
      const bad = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, {
        destination: 'javascript:alert(1)',
        status: 'gone',
      });
      expect(bad.status).to.equal(422);
      expect(Object.keys(bad.body.errors).sort()).to.deep.equal(['destination', 'status']);
    });

    it('DELETE soft-deletes with 204; the code is gone from reads and lists and its slug is reusable', async () => {
      const code = (await svc.post('/v1/qr-codes', a.token, plain('doomed'))).body.data;
      const del = await svc.delete(`/v1/qr-codes/${code.ulid}`, a.token);
      expect(del.status).to.equal(204);
      expect(del.text).to.equal('');
      expect((await svc.get(`/v1/qr-codes/${code.ulid}`, a.token)).status).to.equal(404);
      expect((await svc.delete(`/v1/qr-codes/${code.ulid}`, a.token)).status).to.equal(404);
      const row = await svc.app.db('qr_codes').where({ ulid: code.ulid }).first('deleted_at');
      expect(row.deleted_at).to.be.instanceOf(Date);
      const reuse = await svc.post('/v1/qr-codes', a.token, plain('doomed'));
      expect(reuse.status).to.equal(201);
      expect(reuse.body.data.ulid).to.not.equal(code.ulid);
    });
  });

  describe('GET /v1/qr-codes', () => {
    let org: TestOrg;
    const slugs: string[] = [];
    before(async () => {
      org = await svc.createOrg({ plan: 'business_monthly' });
      // 1203 codes: more than two stream batches.
      const { id } = await svc.app.db('domains').where({ ulid: fallback.ulid }).first('id');
      const rows = [];
      for (let i = 0; i < 1203; i++) {
        const slug = `c${String(i).padStart(4, '0')}`;
        slugs.push(`${org.org.slug}/${slug}`);
        rows.push({
          ulid: ulid(),
          org_id: org.org.id,
          domain_id: id,
          slug: `${org.org.slug}/${slug}`,
          destination: JSON.stringify(`https://example.com/${i}`),
        });
      }
      await svc.app.db.batchInsert('qr_codes', rows, 500);
      await svc.app
        .db('qr_codes')
        .where({ org_id: org.org.id, slug: `${org.org.slug}/c0005` })
        .update({ deleted_at: new Date() });
      slugs.splice(5, 1);
    });

    it('returns every live code of the organization, oldest first, streamed as one JSON document', async () => {
      const res = await svc.get('/v1/qr-codes', org.token);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.body.data.map((c: { slug: string }) => c.slug)).to.deep.equal(slugs);
      expect(res.body.meta).to.deep.equal({ next_cursor: null });
      expect(res.body.data[1202 - 1].destination).to.equal('https://example.com/1202');
    });

    it('pages with limit and an opaque cursor', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = cursor ? `?limit=500&cursor=${cursor}` : '?limit=500';
        const res = await svc.get(`/v1/qr-codes${q}`, org.token);
        expect(res.status).to.equal(200);
        seen.push(...res.body.data.map((c: { slug: string }) => c.slug));
        cursor = res.body.meta.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).to.equal(3);
      expect(seen).to.deep.equal(slugs);
    });

    it('answers 422 for a limit out of range or a cursor it did not issue', async () => {
      for (const limit of ['0', '1001']) {
        const res = await svc.get(`/v1/qr-codes?limit=${limit}`, org.token);
        expect(res.status).to.equal(422);
        expect(res.body.errors).to.have.property('limit');
      }
      const bad = await svc.get('/v1/qr-codes?limit=5&cursor=bm9wZQ', org.token);
      expect(bad.status).to.equal(422);
      expect(bad.body.errors).to.have.property('cursor');
    });

    it('lists only the codes of the organization, none of another organization', async () => {
      const mine = await svc.createOrg({ plan: 'business_monthly' });
      const theirs = await svc.createOrg({ plan: 'business_monthly' });
      expect((await svc.post('/v1/qr-codes', theirs.token, plain('theirs-listed'))).status).to.equal(201);
      expect((await svc.get('/v1/qr-codes', mine.token)).body).to.deep.equal({ data: [], meta: { next_cursor: null } });
      expect((await svc.post('/v1/qr-codes', mine.token, plain('mine-listed'))).status).to.equal(201);
      const res = await svc.get('/v1/qr-codes', mine.token);
      expect(res.status).to.equal(200);
      expect(res.body.data.map((c: { slug: string }) => c.slug)).to.deep.equal([`${mine.org.slug}/mine-listed`]);
    });
  });

  describe('isolation and abilities', () => {
    it('answers 404 for a code of another organization on every verb, and changes nothing', async () => {
      const theirs = (await svc.post('/v1/qr-codes', b.token, plain('theirs'))).body.data;
      expect((await svc.get(`/v1/qr-codes/${theirs.ulid}`, a.token)).status).to.equal(404);
      const patch = await svc.patch(`/v1/qr-codes/${theirs.ulid}`, a.token, { status: 'paused' });
      expect(patch.status).to.equal(404);
      expect(patch.body.code).to.equal('not_found');
      expect((await svc.delete(`/v1/qr-codes/${theirs.ulid}`, a.token)).status).to.equal(404);
      expect((await svc.get(`/v1/qr-codes/${ulid()}`, a.token)).status).to.equal(404);
      const still = await svc.get(`/v1/qr-codes/${theirs.ulid}`, b.token);
      expect(still.body.data).to.deep.equal(theirs);
    });

    const needs: { method: string; path: string; ability: string; body?: (tag: string) => unknown; ok: number }[] = [
      { method: 'GET', path: '/v1/qr-codes', ability: 'codes.view', ok: 200 },
      { method: 'GET', path: '/v1/qr-codes/{id}', ability: 'codes.view', ok: 200 },
      { method: 'POST', path: '/v1/qr-codes', ability: 'codes.create', body: (tag) => plain(`new-${tag}`), ok: 201 },
      {
        method: 'PATCH',
        path: '/v1/qr-codes/{id}',
        ability: 'codes.update',
        body: () => ({ status: 'paused' }),
        ok: 200,
      },
      { method: 'DELETE', path: '/v1/qr-codes/{id}', ability: 'codes.delete', ok: 204 },
    ];
    for (const { method, path, ability, body, ok } of needs) {
      it(`${method} ${path} needs ${ability} (403 with required_ability, nothing changed)`, async () => {
        const tag = `${method}-${path.length}`.toLowerCase();
        const code = (await svc.post('/v1/qr-codes', a.token, plain(`ab-${tag}`))).body.data;
        const url = path.replace('{id}', code.ulid);
        const others = ['codes.view', 'codes.create', 'codes.update', 'codes.delete', 'brands.view'].filter(
          (x) => x !== ability,
        );
        const token = await svc.createToken(a.org, { abilities: others });
        const count = async () =>
          Number(
            (await svc.app.db('qr_codes').where({ org_id: a.org.id }).whereNull('deleted_at').count('* as n'))[0].n,
          );
        const before = await count();
        const res = await svc.request(method, url, { token, body: body?.(tag) });
        expect(res.status).to.equal(403);
        expect(res.body).to.deep.include({ code: 'forbidden', required_ability: ability });
        expect((await svc.get(`/v1/qr-codes/${code.ulid}`, a.token)).body.data).to.deep.equal(code);
        expect(await count()).to.equal(before);
        const allowed = await svc.createToken(a.org, { abilities: [ability] });
        expect((await svc.request(method, url, { token: allowed, body: body?.(tag) })).status).to.equal(ok);
      });
    }

    it('a viewer reads codes but cannot create them', async () => {
      const token = await svc.createToken(a.org, { role: 'viewer', abilities: ['*'] });
      expect((await svc.get('/v1/qr-codes?limit=1', token)).status).to.equal(200);
      const res = await svc.post('/v1/qr-codes', token, plain('viewer'));
      expect(res.status).to.equal(403);
      expect(res.body).to.deep.include({ code: 'forbidden', required_ability: 'codes.create' });
      expect(
        await svc.app
          .db('qr_codes')
          .where({ org_id: a.org.id, slug: `${a.org.slug}/viewer` })
          .first(),
      ).to.equal(undefined);
    });
  });
});
