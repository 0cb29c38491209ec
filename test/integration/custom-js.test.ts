// custom_js on the real stores: the rules of the API (Enterprise plan, a verified custom domain of the
// code's own organization, 10 KB of UTF-8, moving domains) through REST, MCP and bulk import, and the
// redirect serving the script as its own file with its hash in the page's CSP, never on the shared
// fallback host and never on another organization's domain. Domains are verified the way a customer
// verifies them: the test DNS server holds their TXT records. HTTPS with pebble, and the browser
// enforcing the hash, are test/browser/custom-js.test.ts.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { CUSTOM_SCRIPT_PREFIX, MAX_CUSTOM_JS_BYTES } from '../../server/qr-codes/custom-js.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { addVerifiedDomain } from '../helpers/custom-domains.js';
import { waitFor } from '../helpers/poll.js';
import { qrctl } from '../helpers/web-client.js';
import { callTool } from './mcp-helpers.js';
import { FALLBACK, hit } from './redirect-fixtures.js';

const SCRIPT = "document.documentElement.setAttribute('data-custom', 'ran');";

/** SHA-384 of the text by OpenSSL's command line tool: an implementation the service does not use. */
function opensslSha384(text: string): string {
  return execFileSync('openssl', ['dgst', '-sha384', '-binary'], { input: Buffer.from(text, 'utf8') }).toString(
    'base64',
  );
}

/** The script element of a page and the CSP's script-src. */
function scriptOf(page: { body: string; headers: Record<string, unknown> }): {
  src: string;
  integrity: string;
  scriptSrc: string;
} {
  const m = /<script src="([^"]+)" integrity="([^"]+)"><\/script>/.exec(page.body);
  expect(m, page.body).to.not.equal(null);
  const csp = String(page.headers['content-security-policy']);
  const scriptSrc = csp.split(';').find((d) => d.trim().startsWith('script-src')) ?? '';
  return { src: m![1], integrity: m![2], scriptSrc: scriptSrc.trim() };
}

describe('custom_js: a code’s own script on its organization’s verified custom domain', function () {
  this.timeout(90_000);
  let dns: TestDnsServer;
  let svc: TestService;
  let rd: RedirectListener;
  let a: TestOrg;
  let b: TestOrg;
  let small: TestOrg;
  let fallback: string;
  let aDomain: string;
  let bDomain: string;
  let pending: string;
  const tag = crypto.randomBytes(3).toString('hex');
  const aHost = `go.${tag}.a-customer.test`;
  const bHost = `go.${tag}.b-customer.test`;
  let n = 0;

  before(async () => {
    dns = await startDnsServer();
    svc = await startTestService({ config: { dnsResolvers: [dns.address] } });
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50 });
    a = await svc.createOrg({ plan: 'enterprise_monthly' });
    b = await svc.createOrg({ plan: 'enterprise_monthly' });
    small = await svc.createOrg({ plan: 'professional_monthly' });
    fallback = (await svc.get('/v1/domains', a.token)).body.data.find((d: any) => d.type === 'fallback').ulid;
    aDomain = (await addVerifiedDomain(svc, dns, a, aHost)).ulid;
    bDomain = (await addVerifiedDomain(svc, dns, b, bHost)).ulid;
    // Claimed, never verified: no TXT record.
    const claim = await svc.post('/v1/domains', a.token, { host: `wait.${tag}.a-customer.test` });
    expect(claim.status, claim.text).to.equal(201);
    expect(claim.body.data.status).to.equal('pending');
    pending = claim.body.data.ulid;
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
    await dns?.close();
  });

  const create = (org: TestOrg, extra: Record<string, unknown>) =>
    svc.post('/v1/qr-codes', org.token, {
      slug: `js${++n}`,
      destination: 'https://example.com/after',
      domain_ulid: aDomain,
      ...extra,
    });

  it('is null on a plain code', async () => {
    const res = await create(a, {});
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.custom_js).to.equal(null);
  });

  it('is stored as given and returned on a code on a verified custom domain', async () => {
    const res = await create(a, { custom_js: SCRIPT });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.custom_js).to.equal(SCRIPT);
    expect((await svc.get(`/v1/qr-codes/${res.body.data.ulid}`, a.token)).body.data.custom_js).to.equal(SCRIPT);
  });

  it('is 422 custom_js_requires_custom_domain on the shared fallback domain, and nothing is created', async () => {
    const slug = `js${++n}`;
    const res = await create(a, { slug, domain_ulid: fallback, custom_js: SCRIPT });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.code).to.equal('custom_js_requires_custom_domain');
    expect(res.body.errors.custom_js[0]).to.match(/only on a verified custom domain .* never on the shared host/);
    const list = await svc.get(`/v1/qr-codes?search=${slug}`, a.token);
    expect(list.body.data).to.have.length(0);
  });

  it('is 422 custom_js_requires_custom_domain on a custom domain not verified yet, naming its status', async () => {
    const res = await create(a, { domain_ulid: pending, custom_js: SCRIPT });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.code).to.equal('custom_js_requires_custom_domain');
    expect(res.body.errors.custom_js[0]).to.include('is pending');
  });

  it('cannot use another organization’s domain: 404-like "no such domain", whatever custom_js says', async () => {
    const res = await create(a, { domain_ulid: bDomain, custom_js: SCRIPT });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.code).to.equal('validation_failed');
    expect(res.body.errors.domain_ulid).to.deep.equal(['No such domain in this organization.']);
    expect(JSON.stringify(res.body)).to.not.include(bHost);
  });

  it('needs the Enterprise plan: 403 feature_not_in_plan, and null is always allowed', async () => {
    const res = await svc.post('/v1/qr-codes', small.token, {
      slug: 'x1',
      destination: 'https://example.com/',
      domain_ulid: fallback,
      custom_js: SCRIPT,
    });
    expect(res.status, res.text).to.equal(403);
    expect(res.body).to.include({ code: 'feature_not_in_plan', feature: 'custom_js' });
    const cleared = await svc.post('/v1/qr-codes', small.token, {
      slug: 'x2',
      destination: 'https://example.com/',
      domain_ulid: fallback,
      custom_js: null,
    });
    expect(cleared.status, cleared.text).to.equal(201);
  });

  it('takes at most 10240 bytes of UTF-8: a limit in bytes, not characters', async () => {
    const exact = `//${'a'.repeat(MAX_CUSTOM_JS_BYTES - 2)}`;
    const ok = await create(a, { custom_js: exact });
    expect(ok.status, ok.text).to.equal(201);
    expect(ok.body.data.custom_js).to.have.length(MAX_CUSTOM_JS_BYTES);
    const over = await create(a, { custom_js: `${exact}a` });
    expect(over.status, over.text).to.equal(422);
    // 5121 characters of two bytes each: far fewer characters than the limit, 10242 bytes.
    const wide = await create(a, { custom_js: `//${'é'.repeat(5120)}` });
    expect(wide.status, wide.text).to.equal(422);
    expect(wide.body.code).to.equal('validation_failed');
    expect(wide.body.errors.custom_js).to.deep.equal([
      'Must be at most 10240 bytes of UTF-8 (10 KB); this script has 10242 bytes.',
    ]);
    expect((await create(a, { custom_js: '' })).status).to.equal(422);
  });

  it('is refused on static codes, which the service never serves', async () => {
    const res = await create(a, { type: 'text', destination: { text: 'hello' }, custom_js: SCRIPT });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.errors.custom_js[0]).to.match(/static code/);
  });

  it('PATCH sets it only where the code’s domain is verified, and moving to the fallback needs custom_js: null', async () => {
    const onFallback = await create(a, { domain_ulid: fallback });
    const set = await svc.patch(`/v1/qr-codes/${onFallback.body.data.ulid}`, a.token, { custom_js: SCRIPT });
    expect(set.status, set.text).to.equal(422);
    expect(set.body.code).to.equal('custom_js_requires_custom_domain');
    // Moving to the verified domain and setting the script in one request is fine.
    const moved = await svc.patch(`/v1/qr-codes/${onFallback.body.data.ulid}`, a.token, {
      custom_js: SCRIPT,
      domain_ulid: aDomain,
    });
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body.data).to.include({ custom_js: SCRIPT });

    const ulid = moved.body.data.ulid;
    const back = await svc.patch(`/v1/qr-codes/${ulid}`, a.token, { domain_ulid: fallback });
    expect(back.status, back.text).to.equal(422);
    expect(back.body.code).to.equal('custom_js_requires_custom_domain');
    expect(back.body.errors.custom_js[0]).to.include('needs custom_js: null in the same request');
    expect((await svc.get(`/v1/qr-codes/${ulid}`, a.token)).body.data.domain.ulid).to.equal(aDomain);
    const toPending = await svc.patch(`/v1/qr-codes/${ulid}`, a.token, { domain_ulid: pending });
    expect(toPending.status).to.equal(422);
    expect(toPending.body.errors.custom_js[0]).to.include('is pending');

    const cleared = await svc.patch(`/v1/qr-codes/${ulid}`, a.token, { domain_ulid: fallback, custom_js: null });
    expect(cleared.status, cleared.text).to.equal(200);
    expect(cleared.body.data).to.include({ custom_js: null });
    expect(cleared.body.data.domain.ulid).to.equal(fallback);
  });

  it('MCP codes_create and codes_update follow the same rules', async () => {
    const refused = await callTool(svc, a.token, 'codes_create', {
      slug: `js${++n}`,
      destination: 'https://example.com/',
      domain_ulid: fallback,
      custom_js: SCRIPT,
    });
    expect(refused.isError).to.equal(true);
    expect(refused.payload.code).to.equal('custom_js_requires_custom_domain');
    const made = await callTool(svc, a.token, 'codes_create', {
      slug: `js${++n}`,
      destination: 'https://example.com/',
      domain_ulid: aDomain,
      custom_js: SCRIPT,
    });
    expect(made.isError, JSON.stringify(made.payload)).to.equal(false);
    expect(made.payload.data.custom_js).to.equal(SCRIPT);
    const updated = await callTool(svc, a.token, 'codes_update', {
      code_ulid: made.payload.data.ulid,
      custom_js: 'void 0;',
    });
    expect(updated.payload.data.custom_js).to.equal('void 0;');
  });

  it('bulk import: a row on the fallback domain is a row error, a row on the verified domain is staged; the plan is checked', async () => {
    const staged = await svc.post('/v1/qr-codes/bulk', a.token, {
      rows: [
        { slug: `bulk${tag}a`, destination: 'https://example.com/', domain_ulid: fallback, custom_js: SCRIPT },
        { slug: `bulk${tag}b`, destination: 'https://example.com/', domain_ulid: aDomain, custom_js: SCRIPT },
      ],
    });
    expect(staged.status, staged.text).to.equal(201);
    expect(staged.body.data.valid_row_count).to.equal(1);
    expect(staged.body.data.preview_errors).to.have.length(1);
    expect(staged.body.data.preview_errors[0]).to.include({ row: 0, field: 'custom_js' });
    const gated = await svc.post('/v1/qr-codes/bulk', small.token, {
      rows: [{ slug: 'b1', destination: 'https://example.com/', domain_ulid: fallback, custom_js: SCRIPT }],
    });
    expect(gated.status, gated.text).to.equal(403);
    expect(gated.body.code).to.equal('feature_not_in_plan');
  });

  it('qrctl codes create --custom-js-file sets it from a file, codes update --no-custom-js removes it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qr-custom-js-'));
    const file = path.join(dir, 'script.js');
    fs.writeFileSync(file, SCRIPT);
    try {
      const made = await qrctl(svc.app, [
        'codes',
        'create',
        '--org',
        a.org.slug,
        '--slug',
        `cli${tag}`,
        '--destination',
        'https://example.com/',
        '--domain',
        aDomain,
        '--custom-js-file',
        file,
      ]);
      expect(made.code.custom_js).to.equal(SCRIPT);
      const moved = await qrctl(svc.app, [
        'codes',
        'update',
        made.code.ulid,
        '--org',
        a.org.slug,
        '--domain',
        fallback,
        '--no-custom-js',
      ]);
      expect(moved.code).to.include({ custom_js: null });
      expect(moved.code.domain.ulid).to.equal(fallback);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('served by the redirect', () => {
    let slug: string;

    before(async () => {
      slug = `served${tag}`;
      const res = await create(a, { slug, custom_js: SCRIPT });
      expect(res.status, res.text).to.equal(201);
    });

    it('a url code answers with the interstitial that loads the script by src and integrity; the CSP carries the same hash', async () => {
      const page = await hit(rd.port, aHost, `/${slug}`);
      expect(page.status).to.equal(200);
      const s = scriptOf(page);
      const hash = opensslSha384(SCRIPT);
      expect(s.integrity).to.equal(`sha384-${hash}`);
      expect(s.scriptSrc.split(' ')).to.include(`'sha384-${hash}'`);
      expect(s.scriptSrc).to.not.include('unsafe-inline');
      expect(s.scriptSrc).to.not.include("'self'");
      expect(s.src.startsWith(`${CUSTOM_SCRIPT_PREFIX}${slug}.`)).to.equal(true);
      // Never inlined: the script's text is not in the page.
      expect(page.body).to.not.include(SCRIPT);
      // The page moves on to the destination.
      expect(page.body).to.include('href="https://example.com/after"');

      const file = await hit(rd.port, aHost, s.src);
      expect(file.status).to.equal(200);
      expect(file.body).to.equal(SCRIPT);
      expect(file.headers['content-type']).to.equal('text/javascript; charset=utf-8');
      expect(file.headers['x-content-type-options']).to.equal('nosniff');
      expect(opensslSha384(file.body)).to.equal(hash);
    });

    it('a code without custom_js still answers its plain 302', async () => {
      const plain = await create(a, { slug: `plain${tag}` });
      expect(plain.status).to.equal(201);
      const res = await hit(rd.port, aHost, `/plain${tag}`);
      expect(res.status).to.equal(302);
    });

    it('never serves it on the shared fallback host: 404 for the script path, and the code itself is not there', async () => {
      const page = await hit(rd.port, aHost, `/${slug}`);
      const { src } = scriptOf(page);
      for (const path of [src, `/${a.org.slug}${src}`, `/${a.org.slug}/${slug}`]) {
        const res = await hit(rd.port, FALLBACK, path);
        expect(res.status, path).to.equal(404);
        expect(res.body).to.not.include(SCRIPT);
      }
    });

    it('another organization’s domain never serves it, and an unknown version or slug is 404', async () => {
      const { src } = scriptOf(await hit(rd.port, aHost, `/${slug}`));
      const other = await hit(rd.port, bHost, src);
      expect(other.status).to.equal(404);
      expect(other.body).to.not.include(SCRIPT);
      expect((await hit(rd.port, aHost, src.replace(/\.[0-9a-f]{16}\.js$/, '.0000000000000000.js'))).status).to.equal(
        404,
      );
      expect((await hit(rd.port, aHost, `${CUSTOM_SCRIPT_PREFIX}nobody.0000000000000000.js`)).status).to.equal(404);
      // B's own code of the same slug on B's domain carries only B's script.
      const bCode = await svc.post('/v1/qr-codes', b.token, {
        slug,
        destination: 'https://example.com/b',
        domain_ulid: bDomain,
        custom_js: 'void "b";',
      });
      expect(bCode.status, bCode.text).to.equal(201);
      // The redirect learns of the new code through its cache's notification (asynchronous): the
      // script path asked above cached that B's domain had no such code.
      const bPage = await waitFor(
        () => hit(rd.port, bHost, `/${slug}`),
        (r) => r.status === 200,
      );
      const bSrc = scriptOf(bPage).src;
      expect((await hit(rd.port, bHost, bSrc)).body).to.equal('void "b";');
      expect((await hit(rd.port, aHost, bSrc)).status).to.equal(404);
      expect((await svc.get(`/v1/qr-codes/${bCode.body.data.ulid}`, a.token)).status).to.equal(404);
    });

    it('a landing page and a prelander load it too, beside their own hashes', async () => {
      const vcard = await create(a, {
        type: 'vcard',
        destination: { name: 'Ada Lovelace' },
        custom_js: SCRIPT,
      });
      expect(vcard.status, vcard.text).to.equal(201);
      const page = await hit(rd.port, aHost, `/${vcard.body.data.slug.split('/')[1]}`);
      expect(page.status).to.equal(200);
      expect(page.body).to.include('Ada Lovelace');
      const s = scriptOf(page);
      expect(s.scriptSrc).to.equal(`script-src '${s.integrity}'`);
      expect(String(page.headers['content-security-policy'])).to.match(/style-src 'sha256-/);

      const pre = await create(a, { prelander_enabled: true, prelander_seconds: 3, custom_js: SCRIPT });
      const prePage = await hit(rd.port, aHost, `/${pre.body.data.slug.split('/')[1]}`);
      expect(prePage.body).to.include('<span id="count">3</span>');
      const ps = scriptOf(prePage);
      // The prelander's own countdown by its hash, and the custom script by its own.
      expect(ps.scriptSrc).to.match(/^script-src 'sha256-[A-Za-z0-9+/=]+' 'sha384-[A-Za-z0-9+/=]+'$/);
    });

    it('stops when the domain is no longer verified: the page is the plain 302 and the file 404', async () => {
      const host = `gone.${tag}.a-customer.test`;
      const d = await addVerifiedDomain(svc, dns, a, host);
      const code = await create(a, { slug: `gone${tag}`, domain_ulid: d.ulid, custom_js: SCRIPT });
      expect(code.status, code.text).to.equal(201);
      const { src } = scriptOf(await hit(rd.port, host, `/gone${tag}`));
      expect((await hit(rd.port, host, src)).status).to.equal(200);
      // The daily re-check found the TXT record missing for its grace period (domains/lifecycle.ts).
      await svc.app
        .db('domains')
        .where({ ulid: d.ulid })
        .update({
          status: 'unverified',
          ssl_expires_at: new Date(Date.now() + 86_400_000),
          // Plain HTTP here (HTTPS is the browser test's): no 308 to the certificate.
          settings: JSON.stringify({ https_redirect: false }),
        });
      const after = await waitFor(
        () => hit(rd.port, host, `/gone${tag}`),
        (r) => r.status === 302,
      );
      expect(after.headers.location).to.equal('https://example.com/after');
      expect((await hit(rd.port, host, src)).status).to.equal(404);
    });
  });
});
