// Scan anomaly alerts from seeded rollups: the day judged is 2026-05-10, its baseline the same
// weekday of the four weeks before (2026-04-12, -19, -26, 2026-05-03).
import { expect } from 'chai';
import { insertScanEvents, type ScanEvent } from '../../server/analytics/synthetic-scans.js';
import { alertDays, detectScanAnomalies } from '../../server/scan-alerts/service.js';
import { fallbackDomain, makeBrand, makeCode, scanRow, type Ref } from '../helpers/fixtures.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

const DAY = '2026-05-10';

describe('scan anomaly alerts', () => {
  let svc: TestService;
  let org: TestOrg;
  let quiet: TestOrg;
  const codes: Record<string, Ref & { brand: number }> = {};

  /** `n` scans of the code at noon of the day (distinct visitors). */
  function scans(o: TestOrg, code: Ref & { brand: number }, day: string, n: number): ScanEvent[] {
    const ms = Date.parse(`${day}T12:00:00.000Z`);
    return Array.from({ length: n }, (_, i) =>
      scanRow(ms + i, {
        org_id: o.org.id,
        brand_id: code.brand,
        code_id: code.id,
        visitor_hash: String(i),
        country: 'DE',
        device_type: 'mobile',
        language: 'de',
      }),
    );
  }

  before(async () => {
    svc = await startTestService();
    svc.clock.set(`${DAY}T23:00:00.000Z`);
    org = await svc.createOrg({ plan: 'enterprise_monthly' });
    quiet = await svc.createOrg({ plan: 'enterprise_monthly' });
    const domain = await fallbackDomain(svc.app);
    const watched = await makeBrand(svc.app, org.org, { name: 'Watched', slug: 'watched' });
    expect(
      (await svc.patch(`/v1/brands/${watched.ulid}`, org.token, { settings: { scan_alerts: true } })).status,
    ).to.equal(200);
    const make = async (o: TestOrg, slug: string, brand?: Ref) => ({
      ...(await makeCode(svc.app, o.org, { slug, domain, brand })),
      brand: brand?.id ?? 0,
    });
    codes.drop = await make(org, 'drop');
    codes.spike = await make(org, 'spike', watched);
    codes.low = await make(org, 'low');
    codes.steady = await make(org, 'steady', watched);
    codes.unwatched = await make(org, 'unwatched');
    codes.optedOut = await make(org, 'opted-out', watched);
    codes.quiet = await make(quiet, 'quiet-org');
    for (const [key, on] of [
      ['drop', true],
      ['low', true],
      ['optedOut', false],
    ] as const) {
      const res = await svc.patch(`/v1/qr-codes/${codes[key].ulid}`, org.token, { settings: { scan_alerts: on } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.settings).to.deep.equal({ scan_alerts: on });
    }
    const quietCode = await svc.patch(`/v1/qr-codes/${codes.quiet.ulid}`, quiet.token, {
      settings: { scan_alerts: true },
    });
    expect(quietCode.status).to.equal(200);
    for (const o of [org, quiet]) {
      const hook = await svc.post('/v1/webhooks', o.token, {
        url: 'https://hooks.example.com/qr',
        events: ['code.scans_dropped', 'code.scans_spiked'],
      });
      expect(hook.status).to.equal(201);
    }
    // Baseline weeks: 60 scans a day (the low-volume code 5, the steady one 58 to 62); then the day.
    const [, ...weeks] = alertDays(DAY);
    const events: ScanEvent[] = [];
    for (const [i, day] of weeks.entries()) {
      for (const key of ['drop', 'spike', 'unwatched', 'optedOut']) events.push(...scans(org, codes[key], day, 60));
      events.push(...scans(org, codes.steady, day, 58 + i));
      events.push(...scans(org, codes.low, day, 5));
      events.push(...scans(quiet, codes.quiet, day, 60));
    }
    events.push(...scans(org, codes.drop, DAY, 3));
    events.push(...scans(org, codes.spike, DAY, 700));
    events.push(...scans(org, codes.steady, DAY, 55));
    events.push(...scans(org, codes.low, DAY, 0));
    // The others (unwatched, opted out) drop to nothing, as does the other organization's code,
    // which another subscription must not turn into this organization's event.
    await insertScanEvents(svc.app.ch, events);
  });
  after(() => svc.close());

  async function sent(o: TestOrg) {
    return svc.app.db('webhook_events').where({ org_id: o.org.id }).orderBy('id').select('type', 'data');
  }

  it('sends code.scans_dropped and code.scans_spiked for exactly the watched codes that dropped or spiked', async () => {
    expect(await detectScanAnomalies(svc.app, DAY)).to.equal(3);
    const events = await sent(org);
    expect(events.map((e) => `${e.type} ${e.data.code.ulid}`).sort()).to.deep.equal(
      [`code.scans_dropped ${codes.drop.ulid}`, `code.scans_spiked ${codes.spike.ulid}`].sort(),
    );
    const dropped = events.find((e) => e.type === 'code.scans_dropped')!.data;
    expect(dropped).to.deep.include({ day: DAY, scans: 3, baseline: 60, ratio: 0.05 });
    expect(dropped.baseline_days).to.have.length(4);
    const spiked = events.find((e) => e.type === 'code.scans_spiked')!.data;
    expect(spiked).to.deep.include({ day: DAY, scans: 700, baseline: 60 });
    // The other organization's watched code dropped too: its own event, in its own outbox.
    const other = await sent(quiet);
    expect(other.map((e) => `${e.type} ${e.data.code.ulid}`)).to.deep.equal([`code.scans_dropped ${codes.quiet.ulid}`]);
  });

  it('sends nothing twice when the day is judged again', async () => {
    expect(await detectScanAnomalies(svc.app, DAY)).to.equal(0);
    expect(await sent(org)).to.have.length(2);
  });
});
