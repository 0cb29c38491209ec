// Every place the API accepts a URL, fed a table of hostile URLs, then scanned: a URL is either
// refused with a 422 that names what is accepted, or stored normalised (punycode host,
// percent-encoded path and query) and served as such. Never a 5xx, on the API or on the redirect.
import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { waitFor } from '../helpers/poll.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { fallbackDomainId, hit, insertCode, insertCustomDomain } from './redirect-fixtures.js';

const FALLBACK = 'localhost:3001';

/** [what, given, stored (null: refused with 422)] */
const HOSTILE: [string, string, string | null][] = [
  ['a euro sign in the path', 'https://example.com/caf€', 'https://example.com/caf%E2%82%AC'],
  ['an IDN host', 'https://例え.jp/', 'https://xn--r8jz45g.jp/'],
  ['Latin-1 characters', 'https://example.com/\u00e9\u00ff?q=\u00fc', 'https://example.com/%C3%A9%C3%BF?q=%C3%BC'],
  ['an emoji in the fragment', 'https://example.com/#😀', 'https://example.com/#%F0%9F%98%80'],
  ['angle brackets and quotes', 'https://example.com/<x>"y"', 'https://example.com/%3Cx%3E%22y%22'],
  ['an upper-case scheme and host', 'HTTPS://EXAMPLE.COM', 'https://example.com/'],
  ['U+0001 in the path', 'https://example.com/a\u0001b', null],
  ['DEL in the path', 'https://example.com/\u007f', null],
  ['U+0085 in the query', 'https://example.com/?q=\u0085', null],
  ['CRLF header injection', 'https://example.com/\r\nSet-Cookie: x=1', null],
  ['a space in the host', 'https://exa mple.com/', null],
  ['credentials', 'https://user:secret@example.com/', null],
  ['javascript:', 'javascript:alert(1)', null],
  ['an invalid punycode label', 'https://xn--a.example/', null],
  ['port 0', 'https://example.com:0/', null],
  ['an empty label', 'https://a..b/', null],
  ['a label with a leading hyphen', 'https://-a.com/', null],
  ['too long once encoded', `https://example.com/${'é'.repeat(700)}`, null],
];

describe('hostile URLs through every URL field, then scanned', function () {
  this.timeout(120_000);
  let svc: TestService;
  let rd: RedirectListener;
  let a: TestOrg;
  let fallbackUlid: string;
  let fallbackId: number;
  let n = 0;

  before(async () => {
    svc = await startTestService();
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 50 });
    a = await svc.createOrg({ plan: 'professional_monthly', slug: 'hostile' });
    fallbackId = await fallbackDomainId(svc.app);
    fallbackUlid = (await svc.app.db('domains').where({ id: fallbackId }).first('ulid')).ulid;
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
  });

  const scan = (path: string, host = FALLBACK) => hit(rd.port, host, path);

  /** Polls until the redirect answers as expected (a cached domain learns of a change through NOTIFY). */
  async function scanUntil(path: string, host: string, location: string): Promise<void> {
    const res = await waitFor(
      async () => {
        const r = await scan(path, host);
        expect(r.status, `scan of ${host}${path}`).to.be.below(500);
        return { status: r.status, location: r.headers.location };
      },
      (r) => r.status === 302 && r.location === location,
      5000,
    );
    expect(res.location, `${host}${path}`).to.equal(location);
  }

  // Each field: the code body that carries the URL, and where the stored value is read back.
  const codeFields: [string, (url: string) => Record<string, unknown>, (data: any) => unknown, string][] = [
    ['destination', (url) => ({ destination: url }), (d) => d.destination, 'destination'],
    ['destination.url', (url) => ({ destination: { url } }), (d) => d.destination.url, 'destination.url'],
    [
      'a routing rule destination',
      (url) => ({
        destination: 'https://example.com/default',
        routing: { rules: [{ conditions: {}, destination: url }] },
      }),
      (d) => d.routing.rules[0].destination,
      'routing.rules.0.destination',
    ],
    [
      'a variant destination',
      (url) => ({
        destination: 'https://example.com/default',
        routing: { rules: [{ conditions: {}, variants: [{ destination: url, weight: 1 }] }] },
      }),
      (d) => d.routing.rules[0].variants[0].destination,
      'routing.rules.0.variants.0.destination',
    ],
    [
      'the schedule fallback',
      (url) => ({
        destination: 'https://example.com/default',
        // A window that never includes the test's clock (a Monday at noon): the fallback applies.
        schedule: {
          enabled: true,
          timezone: 'UTC',
          windows: [{ days: ['sun'], start: '00:00', end: '00:01' }],
          fallback_destination: url,
        },
      }),
      (d) => d.schedule.fallback_destination,
      'schedule.fallback_destination',
    ],
  ];

  for (const [field, body, read, errorField] of codeFields) {
    it(`normalises or refuses hostile URLs in ${field} and scans them without a 5xx`, async () => {
      svc.clock.set('2026-11-23T12:00:00Z'); // a Monday
      try {
        for (const [what, given, stored] of HOSTILE) {
          const slug = `h${++n}`;
          const res = await svc.post('/v1/qr-codes', a.token, { slug, domain_ulid: fallbackUlid, ...body(given) });
          if (stored === null) {
            expect(res.status, `${what}: ${res.text}`).to.equal(422);
            expect(res.body.errors[errorField][0], what).to.match(
              /^Must be an http or https URL|^Must be a valid http/,
            );
            continue;
          }
          expect(res.status, `${what}: ${res.text}`).to.equal(201);
          expect(read(res.body.data), what).to.equal(stored);
          const patched = await svc.patch(`/v1/qr-codes/${res.body.data.ulid}`, a.token, body(given));
          expect(patched.status, `${what} (PATCH): ${patched.text}`).to.equal(200);
          expect(read(patched.body.data), what).to.equal(stored);
          const answer = await scan(`/${a.org.slug}/${slug}`);
          expect([answer.status, answer.headers.location], what).to.deep.equal([302, stored]);
        }
      } finally {
        svc.clock.reset();
      }
    });
  }

  it('normalises or refuses hostile URLs in a domain’s root and not-found redirects and follows them', async () => {
    for (const [what, given, stored] of HOSTILE) {
      const host = `d${++n}.hostile.test`;
      const id = await insertCustomDomain(svc.app, a.org.id, host);
      const { ulid } = await svc.app.db('domains').where({ id }).first('ulid');
      const res = await svc.patch(`/v1/domains/${ulid}`, a.token, {
        settings: { root_redirect: given, not_found_redirect: given },
      });
      if (stored === null) {
        expect(res.status, `${what}: ${res.text}`).to.equal(422);
        expect(Object.keys(res.body.errors), what).to.include('settings.root_redirect');
        continue;
      }
      expect(res.status, `${what}: ${res.text}`).to.equal(200);
      expect(res.body.data.settings, what).to.deep.equal({ root_redirect: stored, not_found_redirect: stored });
      await scanUntil('/', host, stored);
      await scanUntil('/nothing-here', host, stored);
    }
  });

  it('normalises or refuses hostile URLs in the URL keys of brand settings', async () => {
    for (const [what, given, stored] of HOSTILE) {
      const res = await svc.post('/v1/brands', a.token, {
        name: `Brand ${++n}`,
        settings: { website_url: given, links: [{ url: given }], note: given },
      });
      if (stored === null) {
        expect(res.status, `${what}: ${res.text}`).to.equal(422);
        expect(Object.keys(res.body.errors), what).to.include('settings.website_url');
        continue;
      }
      expect(res.status, `${what}: ${res.text}`).to.equal(201);
      expect(res.body.data.settings.website_url, what).to.equal(stored);
      expect(res.body.data.settings.links, what).to.deep.equal([{ url: stored }]);
      expect(res.body.data.settings.note, `${what}: other keys stay verbatim`).to.equal(given);
    }
  });

  it('serves a URL stored before normalisation in its normalised form, and an unsendable one as 410', async () => {
    const legacy = await insertCode(svc.app, {
      orgId: a.org.id,
      orgSlug: a.org.slug,
      domainId: fallbackId,
      slug: 'legacy-euro',
      destination: 'https://例え.jp/caf€',
    });
    const broken = await insertCode(svc.app, {
      orgId: a.org.id,
      orgSlug: a.org.slug,
      domainId: fallbackId,
      slug: 'legacy-control',
      destination: 'https://example.com/\u0001',
    });
    expect([legacy, broken]).to.have.length(2);
    const ok = await scan(`/${a.org.slug}/legacy-euro`);
    expect([ok.status, ok.headers.location]).to.deep.equal([302, 'https://xn--r8jz45g.jp/caf%E2%82%AC']);
    expect((await scan(`/${a.org.slug}/legacy-control`)).status).to.equal(410);
  });
});
