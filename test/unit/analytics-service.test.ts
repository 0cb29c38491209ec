import { expect } from 'chai';
import { actionEventLabel, dimensionValueLabel } from '../../server/analytics/labels.js';
import { dayRange, decodeCursor, encodeCursor, fillDays, totalsOf } from '../../server/analytics/service.js';
import { ApiError } from '../../server/errors.js';

describe('analytics: ranges, totals and labels', () => {
  it('makes range N the last N UTC days including today', () => {
    const r = dayRange(new Date('2026-03-15T00:30:00.000Z'), 7);
    expect(r.days).to.deep.equal([
      '2026-03-09',
      '2026-03-10',
      '2026-03-11',
      '2026-03-12',
      '2026-03-13',
      '2026-03-14',
      '2026-03-15',
    ]);
    expect(r.from).to.equal('2026-03-09');
    expect(r.to).to.equal('2026-03-15');
    expect(new Date(r.fromMs).toISOString()).to.equal('2026-03-09T00:00:00.000Z');
    expect(new Date(r.toMs).toISOString()).to.equal('2026-03-16T00:00:00.000Z');
  });

  it('keeps the same range until the last millisecond of the UTC day', () => {
    expect(dayRange(new Date('2026-03-15T23:59:59.999Z'), 30).to).to.equal('2026-03-15');
    expect(dayRange(new Date('2026-03-16T00:00:00.000Z'), 30).to).to.equal('2026-03-16');
    expect(dayRange(new Date('2026-03-15T23:59:59.999Z'), 30).days).to.have.length(30);
  });

  it('crosses month and leap-day boundaries day by day', () => {
    const r = dayRange(new Date('2028-03-01T12:00:00Z'), 7);
    expect(r.days).to.deep.equal([
      '2028-02-24',
      '2028-02-25',
      '2028-02-26',
      '2028-02-27',
      '2028-02-28',
      '2028-02-29',
      '2028-03-01',
    ]);
    expect(dayRange(new Date('2026-03-15T12:00:00Z'), 90).from).to.equal('2025-12-16');
  });

  it('fills every day of the range, with zeros where there were no scans', () => {
    const r = dayRange(new Date('2026-03-15T12:00:00Z'), 7);
    expect(
      fillDays(r, [
        { day: '2026-03-10', scans: 4 },
        { day: '2026-03-15', scans: 1 },
      ]).map((d) => d.scans),
    ).to.deep.equal([0, 4, 0, 0, 0, 0, 1]);
  });

  it('computes unique_rate as uniques / scans and 0 without scans', () => {
    expect(totalsOf(8, 2)).to.deep.equal({ scans: 8, uniques: 2, unique_rate: 0.25 });
    expect(totalsOf(0, 0)).to.deep.equal({ scans: 0, uniques: 0, unique_rate: 0 });
  });

  it('never reports more uniques than scans, even when the estimate overshoots', () => {
    expect(totalsOf(10_000, 10_043)).to.deep.equal({ scans: 10_000, uniques: 10_000, unique_rate: 1 });
  });

  it('labels countries and languages by name, devices by type, and empty values as unknown or direct', () => {
    expect(dimensionValueLabel('country', 'DE')).to.equal('Germany');
    expect(dimensionValueLabel('country', 'gb')).to.equal('United Kingdom');
    expect(dimensionValueLabel('country', 'DE', 'de')).to.equal('Deutschland');
    expect(dimensionValueLabel('country', '')).to.equal('Unknown');
    expect(dimensionValueLabel('language', 'pt')).to.equal('Portuguese');
    expect(dimensionValueLabel('language', '')).to.equal('Unknown');
    expect(dimensionValueLabel('device', 'mobile')).to.equal('Mobile');
    expect(dimensionValueLabel('device', 'tablet')).to.equal('Tablet');
    expect(dimensionValueLabel('device', 'desktop')).to.equal('Desktop');
    expect(dimensionValueLabel('device', 'other')).to.equal('Other');
    expect(dimensionValueLabel('referrer', '')).to.equal('Direct');
    expect(dimensionValueLabel('referrer', 'news.ycombinator.com')).to.equal('news.ycombinator.com');
    expect(dimensionValueLabel('provider', '')).to.equal('Unknown');
    expect(dimensionValueLabel('provider', 'Deutsche Telekom')).to.equal('Deutsche Telekom');
  });

  it('names a live action: the landing page’s actions, a link by its number, the consent banner and each answer', () => {
    expect(actionEventLabel('vcard', null)).to.equal('Contact download');
    expect(actionEventLabel('ics', null)).to.equal('Calendar download');
    expect(actionEventLabel('link', 0)).to.equal('Link 1');
    expect(actionEventLabel('link', 2)).to.equal('Link 3');
    expect(actionEventLabel('play_store', null)).to.equal('Google Play');
    expect(actionEventLabel('consent_asked', null)).to.equal('Consent asked');
    expect(actionEventLabel('consent_granted', null)).to.equal('Consent: Accepted');
    expect(actionEventLabel('consent_not_required', null)).to.equal('Consent: Not required');
    expect(actionEventLabel('consent_later', null)).to.equal('Consent: later');
    expect(actionEventLabel('new_kind', null)).to.equal('new_kind');
  });

  it('shows a malformed country or language code as recorded instead of failing', () => {
    expect(dimensionValueLabel('country', '!!')).to.equal('!!');
  });
});

describe('analytics: raw export cursor and content negotiation', () => {
  it('round-trips a keyset cursor', () => {
    const c = encodeCursor(1773576000123, '01JQ0000000000000000000001');
    expect(c).to.match(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c)).to.deep.equal({ ms: 1773576000123, scanId: '01JQ0000000000000000000001' });
  });

  it('refuses a cursor it did not issue with a 422 on the cursor field', () => {
    for (const bad of ['bm90LWEtY3Vyc29y', 'AAAA', Buffer.from('12.a b').toString('base64url')]) {
      try {
        decodeCursor(bad);
        expect.fail(`accepted ${bad}`);
      } catch (err) {
        expect(err).to.be.instanceOf(ApiError);
        expect((err as ApiError).status).to.equal(422);
        expect((err as ApiError).extra.errors).to.have.property('cursor');
      }
    }
  });
});
