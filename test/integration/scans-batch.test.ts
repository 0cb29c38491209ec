// The scans.batch webhook event: per organization that listens, one event per finished minute with
// the scan counts of each code scanned in it, sent once, starting when the organization listens.
import { expect } from 'chai';
import { ulid } from 'ulid';
import { insertScanEvents, type ScanEvent } from '../../server/analytics/synthetic-scans.js';
import { LAG_MS, MAX_CATCH_UP_MINUTES, sendScanBatches } from '../../server/scan-batches/service.js';
import { fallbackDomain, makeCode, scanRow, type Ref } from '../helpers/fixtures.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

const T0 = Date.parse('2026-05-10T12:00:00.000Z');
const MIN = 60_000;

describe('scans.batch webhook event', () => {
  let svc: TestService;
  let org: TestOrg;
  let other: TestOrg;
  let deaf: TestOrg;
  const codes: Record<string, Ref> = {};
  let seq = 0;

  function scans(o: TestOrg, code: Ref, at: number, n: number, isBot: 0 | 1 = 0): ScanEvent[] {
    return Array.from({ length: n }, () => {
      const scanId = ulid(at + seq);
      return scanRow(at + (seq++ % 1000), {
        scan_id: scanId,
        org_id: o.org.id,
        code_id: code.id,
        visitor_hash: String(seq),
        country: 'DE',
        device_type: 'mobile',
        language: 'de',
        is_bot: isBot,
      });
    });
  }

  async function sent(o: TestOrg) {
    return svc.app.db('webhook_events').where({ org_id: o.org.id, type: 'scans.batch' }).orderBy('id').pluck('data');
  }

  const run = (at: number) => sendScanBatches(svc.app, new Date(at));

  before(async () => {
    svc = await startTestService();
    org = await svc.createOrg({ plan: 'enterprise_monthly' });
    other = await svc.createOrg({ plan: 'enterprise_monthly' });
    deaf = await svc.createOrg({ plan: 'enterprise_monthly' });
    const domain = await fallbackDomain(svc.app);
    codes.menu = await makeCode(svc.app, org.org, { slug: 'menu', domain });
    codes.flyer = await makeCode(svc.app, org.org, { slug: 'flyer', domain });
    codes.otherMenu = await makeCode(svc.app, other.org, { slug: 'menu', domain });
    codes.deafMenu = await makeCode(svc.app, deaf.org, { slug: 'menu', domain });
    for (const [o, events] of [
      [org, ['scans.batch']],
      [other, ['scans.batch', 'code.created']],
      [deaf, ['code.created']],
    ] as const) {
      const res = await svc.post('/v1/webhooks', o.token, { url: 'https://hooks.example.com/qr', events });
      expect(res.status, res.text).to.equal(201);
    }
  });
  after(() => svc.close());

  it('starts where the organization starts listening: scans before that are not announced', async () => {
    await insertScanEvents(svc.app.ch, scans(org, codes.menu, T0 - 10 * MIN, 5));
    expect(await run(T0 + LAG_MS)).to.equal(0);
    expect(await sent(org)).to.deep.equal([]);
  });

  it('announces each finished minute once, per code, humans and bots apart, most scanned first', async () => {
    await insertScanEvents(svc.app.ch, [
      ...scans(org, codes.menu, T0 + 5_000, 3),
      ...scans(org, codes.flyer, T0 + 20_000, 7),
      ...scans(org, codes.flyer, T0 + 30_000, 2, 1),
      ...scans(org, codes.menu, T0 + MIN + 1_000, 4),
      // Still inside the lag when the job runs below: announced by a later run.
      ...scans(org, codes.menu, T0 + 2 * MIN + 1_000, 6),
      ...scans(other, codes.otherMenu, T0 + 10_000, 9),
      ...scans(deaf, codes.deafMenu, T0 + 10_000, 9),
    ]);
    // At T0+4m30s the minutes T0 and T0+1m are finished and LAG_MS old; T0+2m is not yet.
    expect(await run(T0 + 2 * MIN + LAG_MS + 30_000)).to.equal(3);
    expect(await sent(org)).to.deep.equal([
      {
        minute: new Date(T0).toISOString(),
        scans: 10,
        bot_scans: 2,
        part: 1,
        parts: 1,
        codes: [
          { ulid: codes.flyer.ulid, slug: `${org.org.slug}/flyer`, name: null, scans: 7, bot_scans: 2 },
          { ulid: codes.menu.ulid, slug: `${org.org.slug}/menu`, name: null, scans: 3, bot_scans: 0 },
        ],
      },
      {
        minute: new Date(T0 + MIN).toISOString(),
        scans: 4,
        bot_scans: 0,
        part: 1,
        parts: 1,
        codes: [{ ulid: codes.menu.ulid, slug: `${org.org.slug}/menu`, name: null, scans: 4, bot_scans: 0 }],
      },
    ]);
    // Each organization gets its own counts; one that does not listen gets nothing.
    const theirs = await sent(other);
    expect(theirs).to.have.length(1);
    expect(theirs[0].codes).to.deep.equal([
      { ulid: codes.otherMenu.ulid, slug: `${other.org.slug}/menu`, name: null, scans: 9, bot_scans: 0 },
    ]);
    expect(await sent(deaf)).to.deep.equal([]);
  });

  it('sends nothing twice, also for two runs at once, and picks up the next minute later', async () => {
    expect(await run(T0 + 2 * MIN + LAG_MS + 30_000)).to.equal(0);
    expect(await sent(org)).to.have.length(2);
    const at = T0 + 3 * MIN + LAG_MS;
    expect((await Promise.all([run(at), run(at)])).sort()).to.deep.equal([0, 1]);
    expect(await sent(org)).to.have.length(3);
    const last = (await sent(org)).at(-1);
    expect(last).to.deep.include({ minute: new Date(T0 + 2 * MIN).toISOString(), scans: 6 });
  });

  it('after a pause of the worker announces only the latest minutes', async () => {
    const back = T0 + 300 * MIN;
    await insertScanEvents(svc.app.ch, [
      ...scans(org, codes.menu, T0 + 100 * MIN, 1),
      ...scans(org, codes.menu, back - LAG_MS - 30 * MIN, 2),
    ]);
    // The first scan is older than the catch-up window at `back`, the second inside it.
    expect(T0 + 100 * MIN).to.be.below(back - LAG_MS - MAX_CATCH_UP_MINUTES * MIN);
    const before = (await sent(org)).length;
    expect(await run(back)).to.equal(1);
    const events = (await sent(org)).slice(before);
    expect(events.map((e) => e.minute)).to.deep.equal([new Date(back - LAG_MS - 30 * MIN).toISOString()]);
  });

  it('writes a delivery for the organization’s endpoint', async () => {
    const deliveries = await svc.app
      .db('webhook_deliveries as d')
      .join('webhook_events as e', 'e.id', 'd.event_id')
      .where({ 'e.org_id': org.org.id, 'e.type': 'scans.batch' })
      .count<{ count: string }[]>('* as count');
    expect(Number(deliveries[0].count)).to.equal((await sent(org)).length);
  });
});
