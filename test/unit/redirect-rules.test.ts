import { expect } from 'chai';
import {
  appendUtm,
  decide,
  inSchedule,
  localWeekMinute,
  parseRules,
  parseSchedule,
  pickVariant,
  route,
  type CodeSettings,
  type Visitor,
} from '../../server/qr-codes/routing.js';

const visitor = (over: Partial<Visitor> = {}): Visitor => ({
  device: 'desktop',
  os: 'Windows',
  country: 'FR',
  language: 'fr',
  visitorHash: '123456789',
  ...over,
});

const code = (over: Partial<CodeSettings> = {}): CodeSettings => ({
  id: 7,
  status: 'active',
  destination: 'https://example.com/landing',
  routing: null,
  schedule: null,
  dateBegin: null,
  expireAt: null,
  utmParams: null,
  ...over,
});

describe('redirect rules', () => {
  describe('status and dates', () => {
    it('redirects an active code to its destination with no rule matched', () => {
      expect(decide(code(), visitor(), new Date())).to.deep.equal({
        kind: 'redirect',
        url: 'https://example.com/landing',
        matchedRule: -1,
      });
    });

    it('accepts a destination given as an object with a url key', () => {
      expect(decide(code({ destination: { url: 'https://a.example/x' } }), visitor(), new Date())).to.deep.equal({
        kind: 'redirect',
        url: 'https://a.example/x',
        matchedRule: -1,
      });
    });

    for (const status of ['paused', 'archived']) {
      it(`answers not found for a ${status} code`, () => {
        expect(decide(code({ status }), visitor(), new Date())).to.deep.equal({ kind: 'not_found' });
      });
    }

    it('is gone before date_begin and redirects from that instant on', () => {
      const begin = new Date('2030-01-01T00:00:00Z');
      expect(decide(code({ dateBegin: begin }), visitor(), new Date(begin.getTime() - 1))).to.deep.equal({
        kind: 'gone',
        reason: 'not_started',
      });
      expect(decide(code({ dateBegin: begin }), visitor(), begin).kind).to.equal('redirect');
    });

    it('is gone from expire_at on and redirects until just before it', () => {
      const end = new Date('2030-01-01T00:00:00Z');
      expect(decide(code({ expireAt: end }), visitor(), end)).to.deep.equal({ kind: 'gone', reason: 'expired' });
      expect(decide(code({ expireAt: end }), visitor(), new Date(end.getTime() - 1)).kind).to.equal('redirect');
    });

    it('is gone when the destination is not an http(s) URL', () => {
      expect(decide(code({ destination: 'javascript:alert(1)' }), visitor(), new Date())).to.deep.equal({
        kind: 'gone',
        reason: 'no_destination',
      });
    });
  });

  describe('routing rules', () => {
    const routing = {
      rules: [
        { conditions: { device: ['mobile'], os: ['iOS'] }, destination: 'https://apps.apple.com/app' },
        { conditions: { device: 'mobile', os: 'android' }, destination: 'https://play.google.com/app' },
        { conditions: { country: ['de', 'AT'] }, destination: 'https://example.de/' },
        { conditions: { language: ['fr'] }, destination: 'https://example.fr/' },
        { conditions: { country: ['FR'] }, destination: 'https://never.example/' },
      ],
    };

    it('takes the first matching rule in order', () => {
      const d = decide(code({ routing }), visitor({ country: 'FR', language: 'fr' }), new Date());
      expect(d).to.deep.equal({ kind: 'redirect', url: 'https://example.fr/', matchedRule: 3 });
    });

    it('requires every condition of a rule (device and os)', () => {
      expect(
        decide(code({ routing }), visitor({ device: 'mobile', os: 'iOS', country: 'US', language: 'en' }), new Date()),
      ).to.deep.equal({
        kind: 'redirect',
        url: 'https://apps.apple.com/app',
        matchedRule: 0,
      });
      expect(
        decide(code({ routing }), visitor({ device: 'desktop', os: 'iOS', country: 'US', language: 'en' }), new Date()),
      ).to.deep.equal({
        kind: 'redirect',
        url: 'https://example.com/landing',
        matchedRule: -1,
      });
    });

    it('compares os names loosely and countries case-insensitively', () => {
      expect(
        decide(
          code({ routing }),
          visitor({ device: 'mobile', os: 'Android', country: 'US', language: 'en' }),
          new Date(),
        ),
      ).to.include({ matchedRule: 1 });
      expect(decide(code({ routing }), visitor({ country: 'DE', language: 'de' }), new Date())).to.include({
        matchedRule: 2,
        url: 'https://example.de/',
      });
      const mac = parseRules({ rules: [{ conditions: { os: 'macos' }, destination: 'https://m.example/' }] });
      expect(route(mac, null, visitor({ os: 'Mac OS' }), 1)).to.deep.equal({
        url: 'https://m.example/',
        matchedRule: 0,
      });
    });

    it('matches a language condition on the primary tag', () => {
      const rules = parseRules({
        rules: [{ conditions: { language: ['pt-BR'] }, destination: 'https://pt.example/' }],
      });
      expect(route(rules, 'https://d.example/', visitor({ language: 'pt' }), 1)).to.deep.equal({
        url: 'https://pt.example/',
        matchedRule: 0,
      });
    });

    it('never matches a condition when the visitor fact is unknown', () => {
      const rules = parseRules({ rules: [{ conditions: { country: ['FR'] }, destination: 'https://fr.example/' }] });
      expect(route(rules, 'https://d.example/', visitor({ country: '' }), 1)).to.deep.equal({
        url: 'https://d.example/',
        matchedRule: -1,
      });
    });

    it('lets a rule without conditions match everyone', () => {
      const rules = parseRules({ rules: [{ destination: 'https://all.example/' }] });
      expect(route(rules, 'https://d.example/', visitor(), 1)).to.deep.equal({
        url: 'https://all.example/',
        matchedRule: 0,
      });
    });

    it('skips a rule whose destination is unusable', () => {
      const rules = parseRules({
        rules: [{ conditions: {}, destination: 'ftp://x' }, { destination: { url: 'https://ok.example/' } }],
      });
      expect(route(rules, null, visitor(), 1)).to.deep.equal({ url: 'https://ok.example/', matchedRule: 1 });
    });
  });

  describe('A/B split', () => {
    const variants = [
      { destination: 'https://a.example/', weight: 70 },
      { destination: 'https://b.example/', weight: 30 },
    ];

    it('splits visitors by weight within 2 points over 20,000 visitors', () => {
      let a = 0;
      for (let i = 0; i < 20_000; i++)
        if (pickVariant(variants, `7:0:${1_000_000_007 * i}`).destination === 'https://a.example/') a++;
      expect(a / 20_000).to.be.within(0.68, 0.72);
    });

    it('sends the same visitor to the same variant every time', () => {
      const routing = { rules: [{ conditions: {}, variants }] };
      for (let i = 0; i < 200; i++) {
        const v = visitor({ visitorHash: String(987654321 + i * 7919) });
        const first = decide(code({ routing }), v, new Date());
        for (let k = 0; k < 5; k++) expect(decide(code({ routing }), v, new Date())).to.deep.equal(first);
        expect(first).to.include({ matchedRule: 0 });
      }
    });

    it('ignores variants with a zero or negative weight', () => {
      const rules = parseRules({
        rules: [
          {
            variants: [
              { destination: 'https://a.example/', weight: 0 },
              { destination: 'https://b.example/', weight: 1 },
            ],
          },
        ],
      });
      for (let i = 0; i < 50; i++)
        expect(route(rules, null, visitor({ visitorHash: String(i) }), 1).url).to.equal('https://b.example/');
    });
  });

  describe('schedule', () => {
    const schedule = {
      enabled: true,
      timezone: 'America/New_York',
      windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }],
      fallback_destination: 'https://closed.example/',
    };

    it('reads the weekday and minute in the schedule time zone', () => {
      // 2024-01-15 is a Monday; 02:30 UTC is still Sunday 21:30 in New York (UTC-5).
      expect(localWeekMinute(new Date('2024-01-15T02:30:00Z'), 'America/New_York')).to.deep.equal({
        day: 7,
        minute: 21 * 60 + 30,
      });
      expect(localWeekMinute(new Date('2024-01-15T02:30:00Z'), 'Asia/Tokyo')).to.deep.equal({
        day: 1,
        minute: 11 * 60 + 30,
      });
    });

    it('opens at the window start in the time zone, not in UTC', () => {
      // Monday 09:00 New York = 14:00 UTC in winter.
      const s = parseSchedule(schedule)!;
      expect(inSchedule(s, new Date('2024-01-15T13:59:59Z'))).to.equal(false);
      expect(inSchedule(s, new Date('2024-01-15T14:00:00Z'))).to.equal(true);
      expect(inSchedule(s, new Date('2024-01-15T21:59:59Z'))).to.equal(true);
      expect(inSchedule(s, new Date('2024-01-15T22:00:00Z'))).to.equal(false);
    });

    it('follows daylight saving time: 09:00 New York is 13:00 UTC in summer', () => {
      const s = parseSchedule(schedule)!;
      expect(inSchedule(s, new Date('2024-07-15T12:59:00Z'))).to.equal(false);
      expect(inSchedule(s, new Date('2024-07-15T13:00:00Z'))).to.equal(true);
    });

    it('treats a UTC Saturday that is still Friday in the zone as Friday', () => {
      // Saturday 2024-01-20 01:00 UTC is Friday 20:00 in New York, inside a Friday 18-23 window.
      const evening = { ...schedule, windows: [{ days: ['fri'], start: '18:00', end: '23:00' }] };
      const s = parseSchedule(evening)!;
      expect(inSchedule(s, new Date('2024-01-20T01:00:00Z'))).to.equal(true);
      expect(inSchedule(s, new Date('2024-01-21T01:00:00Z'))).to.equal(false);
    });

    it('lets a window that ends before it starts span midnight into the next day', () => {
      const s = parseSchedule({
        enabled: true,
        timezone: 'UTC',
        windows: [{ days: ['sun'], start: '22:00', end: '02:00' }],
      })!;
      expect(inSchedule(s, new Date('2024-01-14T22:00:00Z'))).to.equal(true); // Sunday 22:00
      expect(inSchedule(s, new Date('2024-01-15T01:59:00Z'))).to.equal(true); // Monday 01:59
      expect(inSchedule(s, new Date('2024-01-15T02:00:00Z'))).to.equal(false);
      expect(inSchedule(s, new Date('2024-01-13T23:00:00Z'))).to.equal(false); // Saturday
    });

    it('sends visitors outside every window to the fallback destination with no rule matched', () => {
      const routing = { rules: [{ destination: 'https://rule.example/' }] };
      expect(decide(code({ schedule, routing }), visitor(), new Date('2024-01-15T13:00:00Z'))).to.deep.equal({
        kind: 'redirect',
        url: 'https://closed.example/',
        matchedRule: -1,
      });
      expect(decide(code({ schedule, routing }), visitor(), new Date('2024-01-15T15:00:00Z'))).to.deep.equal({
        kind: 'redirect',
        url: 'https://rule.example/',
        matchedRule: 0,
      });
    });

    it('is gone outside the windows when there is no fallback', () => {
      const { fallback_destination: _, ...noFallback } = schedule;
      expect(decide(code({ schedule: noFallback }), visitor(), new Date('2024-01-15T13:00:00Z'))).to.deep.equal({
        kind: 'gone',
        reason: 'outside_schedule',
      });
    });

    it('ignores a disabled schedule', () => {
      expect(
        decide(code({ schedule: { ...schedule, enabled: false } }), visitor(), new Date('2024-01-15T13:00:00Z')),
      ).to.include({
        url: 'https://example.com/landing',
      });
    });

    it('falls back to UTC for an unknown time zone', () => {
      expect(parseSchedule({ ...schedule, timezone: 'Mars/Olympus' })!.timezone).to.equal('UTC');
    });
  });

  describe('utm parameters', () => {
    it('appends utm parameters, prefixing bare keys', () => {
      expect(appendUtm('https://x.example/p', { utm_source: 'qr', medium: 'print' })).to.equal(
        'https://x.example/p?utm_source=qr&utm_medium=print',
      );
    });

    it('keeps the destination query and fragment and never overrides its keys', () => {
      expect(
        appendUtm('https://x.example/p?utm_source=own&q=a%20b#top', { utm_source: 'qr', utm_campaign: 'spring sale' }),
      ).to.equal('https://x.example/p?utm_source=own&q=a%20b&utm_campaign=spring%20sale#top');
    });

    it('leaves the URL untouched when there is nothing to add', () => {
      expect(appendUtm('https://x.example/p?a=1', null)).to.equal('https://x.example/p?a=1');
      expect(appendUtm('https://x.example/p?utm_source=a', { utm_source: 'b' })).to.equal(
        'https://x.example/p?utm_source=a',
      );
    });

    it('applies to the routed destination', () => {
      const d = decide(
        code({ utmParams: { utm_source: 'qr' }, destination: 'https://x.example/?a=1' }),
        visitor(),
        new Date(),
      );
      expect(d).to.deep.equal({ kind: 'redirect', url: 'https://x.example/?a=1&utm_source=qr', matchedRule: -1 });
    });
  });
});
