// The redirect's cache under a flood: unknown slugs and hosts are answered by the known-keys filter
// without a Postgres query, hot codes stay cached when the cache is full, a code created after the
// filter was built is served, and orphan scans are sampled per domain.
import { expect } from 'chai';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { waitFor } from '../helpers/poll.js';
import { checkDigit } from '../../server/qr-codes/gs1.js';
import { chRows, fallbackDomainId, hit, insertCode, insertCustomDomain } from './redirect-fixtures.js';

const FALLBACK = 'localhost:3001';

describe('redirect cache: LRU, known-keys filter, orphan sampling', function () {
  this.timeout(120_000);
  let svc: TestService;
  let rd: RedirectListener;
  let org: { id: number; slug: string };
  let fallbackId: number;
  let n = 0;

  before(async () => {
    svc = await startTestService({ api: false });
    // No filtered key is re-checked in Postgres: what the filter says absent is answered at once.
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', {
      flushMs: 50,
      counterFlushMs: 50,
      orphansPerSecond: 1,
      cache: { lookupsPerSecond: 0, maxCodes: 3 },
    });
    const created = await svc.createOrg({ slug: 'flood' });
    org = { id: created.org.id, slug: created.org.slug };
    fallbackId = await fallbackDomainId(svc.app);
    await waitFor(() => rd.cache.filterReady);
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
  });

  const code = async () => {
    const slug = `c${++n}`;
    await insertCode(svc.app, { orgId: org.id, orgSlug: org.slug, domainId: fallbackId, slug });
    return `/${org.slug}/${slug}`;
  };
  const random = () => Math.random().toString(36).slice(2, 12);

  it('answers 1,000 random unknown slugs and hosts with 404 and (almost) no Postgres lookup', async () => {
    const before = rd.cache.stats.misses;
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        i % 2 ? hit(rd.port, FALLBACK, `/${org.slug}/${random()}`) : hit(rd.port, `${random()}.test`, `/${random()}`),
      ),
    );
    expect(answers.every((r) => r.status === 404)).to.equal(true);
    // The filter's false-positive rate is 0.1%: a lookup or two at most, never one per request.
    expect(rd.cache.stats.misses - before).to.be.at.most(5);
    expect(rd.cache.stats.filtered).to.be.at.least(995);
  });

  it('answers made-up GTINs from the filter, and serves a gs1 code created after it was built until it is paused', async () => {
    const gtin = () => {
      const body = `0950${Math.random().toString().slice(2, 11)}`;
      return `${body}${checkDigit(body)}`;
    };
    const before = rd.cache.stats.misses;
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => hit(rd.port, FALLBACK, `/${org.slug}/01/${gtin()}`)),
    );
    expect(answers.map((r) => r.status).filter((s) => s !== 404)).to.deep.equal([]);
    // The filter's false-positive rate is 0.1%: a lookup at most, never one per request.
    expect(rd.cache.stats.misses - before).to.be.at.most(2);

    const product = gtin();
    const id = await insertCode(svc.app, {
      orgId: org.id,
      orgSlug: org.slug,
      domainId: fallbackId,
      slug: `g${++n}`,
      type: 'gs1',
      destination: {
        gtin: product,
        links: [{ link_type: 'gs1:pip', href: 'https://example.com/product', title: 'Product', default: true }],
      },
    });
    const path = `/${org.slug}/01/${product}`;
    await waitFor(async () => (await hit(rd.port, FALLBACK, path)).status === 307);
    expect((await hit(rd.port, FALLBACK, path)).headers.location).to.equal('https://example.com/product');
    // The code's notification names its GTIN: that cached entry is dropped, and the next answer is 404.
    await svc.app.db('qr_codes').where({ id }).update({ status: 'paused' });
    await waitFor(async () => (await hit(rd.port, FALLBACK, path)).status === 404);
  });

  it('serves a code created after the filter was built, once its notification arrives', async () => {
    const path = await code();
    await waitFor(async () => (await hit(rd.port, FALLBACK, path)).status === 302);
  });

  it('keeps the most recently used codes when the cache is full', async () => {
    const [a, b, c, d] = [await code(), await code(), await code(), await code()];
    for (const p of [a, b, c, d]) await waitFor(async () => (await hit(rd.port, FALLBACK, p)).status === 302);
    // The cache holds 3: b, c, d. Touch b, then load a (evicts c, the least recently used).
    await hit(rd.port, FALLBACK, b);
    await hit(rd.port, FALLBACK, a);
    const misses = rd.cache.stats.misses;
    await hit(rd.port, FALLBACK, b);
    await hit(rd.port, FALLBACK, d);
    await hit(rd.port, FALLBACK, a);
    expect(rd.cache.stats.misses - misses, 'b, d and a are cached').to.equal(0);
    await hit(rd.port, FALLBACK, c);
    expect(rd.cache.stats.misses - misses, 'c was evicted').to.equal(1);
  });

  it('loads a key that many requests want at once with one Postgres query', async () => {
    const path = await code();
    const key = path.slice(1).toLowerCase();
    const misses = rd.cache.stats.misses;
    const entries = await Promise.all(Array.from({ length: 12 }, () => rd.cache.loadCode(key)));
    expect(entries.every((e) => e !== null && e.id === entries[0]!.id)).to.equal(true);
    expect(rd.cache.stats.misses - misses).to.equal(1);
  });

  it('records orphan scans up to the per-domain rate and counts the rest', async () => {
    const dropped = async () => (await svc.app.metrics.orphanScansDropped.get()).values[0]?.value ?? 0;
    // A domain of its own, so no other request of this file uses its budget.
    const host = `${random()}.flood.test`;
    await insertCustomDomain(svc.app, org.id, host, { settings: { root_redirect: 'https://example.com/' } });
    await waitFor(async () => (await hit(rd.port, host, '/')).status === 302);
    const before = await dropped();
    await Promise.all(Array.from({ length: 40 }, (_, i) => hit(rd.port, host, `/nothing-${i}`)));
    await rd.orphans.flush();
    const [{ rows }] = await chRows<{ rows: string }>(
      svc.app,
      `SELECT count() AS rows FROM ${svc.app.ch.database}.orphan_scans WHERE host = {h:String}`,
      { h: host },
    );
    const droppedNow = (await dropped()) - before;
    expect(Number(rows) + droppedNow).to.equal(40);
    expect(Number(rows)).to.be.at.least(1);
    expect(droppedNow).to.be.at.least(1);
  });
});
