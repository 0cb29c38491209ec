import { expect } from 'chai';
import {
  appendUtm,
  decide,
  inSchedule,
  localWeekMinute,
  parseCode,
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

    it('treats OS X, Mac OS X and macOS as one operating system', () => {
      for (const [wanted, reported] of [
        ['osx', 'Mac OS'],
        ['macOS', 'Mac OS X'],
        ['Mac OS X', 'OS X'],
      ]) {
        const rules = parseRules({ rules: [{ conditions: { os: [wanted] }, destination: 'https://m.example/' }] });
        expect(route(rules, null, visitor({ os: reported }), 1), `${wanted} / ${reported}`).to.deep.equal({
          url: 'https://m.example/',
          matchedRule: 0,
        });
      }
      const ios = parseRules({ rules: [{ conditions: { os: ['macos'] }, destination: 'https://m.example/' }] });
      expect(route(ios, null, visitor({ os: 'iOS' }), 1)).to.deep.equal({ url: null, matchedRule: -1 });
    });

    it('redirects to an http:// destination, in a rule and as the code destination', () => {
      const rules = parseRules({ rules: [{ conditions: { device: 'mobile' }, destination: 'http://m.example/x' }] });
      expect(route(rules, 'http://plain.example/', visitor({ device: 'mobile' }), 1)).to.deep.equal({
        url: 'http://m.example/x',
        matchedRule: 0,
      });
      expect(decide(code({ destination: 'http://plain.example/page' }), visitor(), new Date())).to.deep.equal({
        kind: 'redirect',
        url: 'http://plain.example/page',
        matchedRule: -1,
      });
    });

    it('accepts the plural condition keys and conditions at the top of a rule', () => {
      const rules = parseRules({
        rules: [
          { devices: ['tablet'], destination: 'https://t.example/' },
          { conditions: { countries: ['ch'] }, destination: 'https://ch.example/' },
          { conditions: { languages: 'it_CH' }, destination: 'https://it.example/' },
        ],
      });
      expect(route(rules, null, visitor({ device: 'tablet' }), 1).matchedRule).to.equal(0);
      expect(route(rules, null, visitor({ country: 'CH' }), 1).matchedRule).to.equal(1);
      expect(route(rules, null, visitor({ language: 'it' }), 1).matchedRule).to.equal(2);
      expect(route(rules, null, visitor(), 1).matchedRule).to.equal(-1);
    });

    it('reads condition values leniently: one value or a list, spaces trimmed, non-strings and empty lists ignored', () => {
      const rules = parseRules({
        rules: [
          { conditions: { country: [' de '], device: ' Mobile ' }, destination: 'https://de.example/' },
          { conditions: { device: [7, 'tablet'] }, destination: 'https://t.example/' },
          { conditions: { country: [], os: null }, destination: 'https://all.example/' },
        ],
      });
      expect(rules.map((r) => [r.country, r.device, r.os])).to.deep.equal([
        [['DE'], ['mobile'], null],
        [null, ['tablet'], null],
        [null, null, null],
      ]);
      expect(route(rules, null, visitor({ country: 'DE', device: 'mobile' }), 1).matchedRule).to.equal(0);
      expect(route(rules, null, visitor({ device: 'tablet' }), 1).matchedRule).to.equal(1);
      expect(route(rules, null, visitor(), 1).matchedRule).to.equal(2);
    });

    it('does not match an empty condition value to a visitor fact that is unknown', () => {
      const rules = parseRules({ rules: [{ conditions: { language: [''] }, destination: 'https://x.example/' }] });
      expect(route(rules, 'https://d.example/', visitor({ language: '' }), 1)).to.deep.equal({
        url: 'https://d.example/',
        matchedRule: -1,
      });
    });

    it('reads no rules from routing that is not an object with a rules list', () => {
      for (const routing of [null, 'x', [], { rules: 'x' }]) expect(parseRules(routing)).to.deep.equal([]);
      expect(parseRules({ rules: [null] })).to.deep.equal([
        { device: null, os: null, country: null, language: null, destination: null, variants: null },
      ]);
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

    it('splits three variants 50/30/20 by their stored weights, through the stored routing', () => {
      const routing = {
        rules: [
          {
            variants: [
              { destination: 'https://a.example/', weight: 5 },
              { destination: { url: 'https://b.example/' }, weight: 3 },
              { url: 'https://c.example/', weight: 2 },
            ],
          },
        ],
      };
      const stored = code({ routing });
      const parsed = parseCode(stored); // as the redirect caches it
      const seen: Record<string, number> = {};
      for (let i = 0; i < 10_000; i++) {
        const d = decide(stored, visitor({ visitorHash: String(1_000_000_007 * i) }), new Date(), parsed);
        if (d.kind !== 'redirect') throw new Error(d.kind);
        seen[d.url] = (seen[d.url] ?? 0) + 1;
      }
      expect(Object.keys(seen).sort()).to.deep.equal([
        'https://a.example/',
        'https://b.example/',
        'https://c.example/',
      ]);
      expect(seen['https://a.example/'] / 10_000).to.be.within(0.475, 0.525);
      expect(seen['https://b.example/'] / 10_000).to.be.within(0.275, 0.325);
      expect(seen['https://c.example/'] / 10_000).to.be.within(0.175, 0.225);
    });

    it('gives a variant without a weight the weight 1', () => {
      const rules = parseRules({
        rules: [
          { variants: [{ destination: 'https://a.example/' }, { destination: 'https://b.example/', weight: 3 }] },
        ],
      });
      let a = 0;
      for (let i = 0; i < 8000; i++)
        if (route(rules, null, visitor({ visitorHash: String(7919 * i) }), 1).url === 'https://a.example/') a++;
      expect(a / 8000).to.be.within(0.23, 0.27);
    });

    it('seeds the split with the code and the rule, so two codes split one visitor independently', () => {
      const variants = [
        { destination: 'https://a.example/', weight: 1 },
        { destination: 'https://b.example/', weight: 1 },
      ];
      const rules = parseRules({ rules: [{ variants }] });
      let differ = 0;
      for (let i = 0; i < 400; i++) {
        const v = visitor({ visitorHash: String(104729 * i) });
        if (route(rules, null, v, 1).url !== route(rules, null, v, 2).url) differ++;
      }
      expect(differ).to.be.within(150, 250); // about half, not none
    });

    it('drops variants without a usable destination or weight; a rule left with none uses its destination', () => {
      const rules = parseRules({
        rules: [
          {
            variants: [
              'https://string.example/',
              { weight: 5 },
              { destination: 'ftp://x.example/', weight: 5 },
              { destination: 'https://nan.example/', weight: 'lots' },
              { destination: 'https://inf.example/', weight: Infinity },
              { destination: 'https://zero.example/', weight: 0 },
              { destination: 'https://neg.example/', weight: -1 },
            ],
            destination: 'https://rule.example/',
          },
        ],
      });
      expect(rules[0].variants).to.equal(null);
      expect(route(rules, null, visitor(), 1)).to.deep.equal({ url: 'https://rule.example/', matchedRule: 0 });
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

    const utcWeek = (windows: unknown[]) => parseSchedule({ enabled: true, timezone: 'UTC', windows })!;
    // 2024-01-15 is a Monday.
    const at = (day: number, hhmm: string) => new Date(`2024-01-${String(14 + day).padStart(2, '0')}T${hhmm}:00Z`);

    it('keeps the minutes of a 09:30-17:45 window: open at 09:30 and 17:44, closed at 09:29 and 17:45', () => {
      const s = utcWeek([{ days: ['mon'], start: '09:30', end: '17:45' }]);
      expect(inSchedule(s, at(1, '09:29'))).to.equal(false);
      expect(inSchedule(s, at(1, '09:30'))).to.equal(true);
      expect(inSchedule(s, at(1, '17:44'))).to.equal(true);
      expect(inSchedule(s, at(1, '17:45'))).to.equal(false);
    });

    it('an overnight window Friday 22:00-02:00 is open at Saturday 01:30, closed at Sunday 01:30', () => {
      const s = utcWeek([{ days: ['fri'], start: '22:00', end: '02:00' }]);
      expect(inSchedule(s, at(5, '22:00'))).to.equal(true); // Friday 22:00
      expect(inSchedule(s, at(5, '23:59'))).to.equal(true);
      expect(inSchedule(s, at(6, '01:30'))).to.equal(true); // Saturday 01:30
      expect(inSchedule(s, at(6, '02:00'))).to.equal(false);
      expect(inSchedule(s, at(7, '01:30'))).to.equal(false); // Sunday 01:30
      expect(inSchedule(s, at(5, '01:30'))).to.equal(false); // Friday 01:30 belongs to Thursday
    });

    it('an overnight window is closed during the day, on its own day and on the next', () => {
      const s = utcWeek([{ days: ['fri'], start: '22:00', end: '02:00' }]);
      expect(inSchedule(s, at(5, '12:00'))).to.equal(false);
      expect(inSchedule(s, at(5, '21:59'))).to.equal(false);
      expect(inSchedule(s, at(6, '12:00'))).to.equal(false);
      expect(inSchedule(s, at(6, '22:30'))).to.equal(false); // Saturday night is not listed
    });

    it('an overnight window on Sunday runs into Monday morning, and Monday night into Tuesday', () => {
      const s = utcWeek([{ days: [7, 'monday'], start: '23:00', end: '01:00' }]);
      expect(inSchedule(s, at(1, '00:30'))).to.equal(true); // Monday 00:30, from Sunday
      expect(inSchedule(s, at(2, '00:30'))).to.equal(true); // Tuesday 00:30, from Monday
      expect(inSchedule(s, at(3, '00:30'))).to.equal(false); // Wednesday 00:30
    });

    it('is open in any of several windows: lunch and dinner', () => {
      const s = utcWeek([
        { days: ['sat'], start: '11:30', end: '14:00' },
        { days: ['sat'], start: '18:00', end: '22:00' },
      ]);
      expect(inSchedule(s, at(6, '12:00'))).to.equal(true);
      expect(inSchedule(s, at(6, '19:00'))).to.equal(true);
      expect(inSchedule(s, at(6, '16:00'))).to.equal(false);
      expect(inSchedule(s, at(6, '23:00'))).to.equal(false);
    });

    it('opens a window without days on every day, and takes 24:00 as the end of the day', () => {
      const s = utcWeek([{ start: '20:00', end: '24:00' }]);
      for (let day = 1; day <= 7; day++) {
        expect(inSchedule(s, at(day, '23:59'))).to.equal(true);
        expect(inSchedule(s, at(day, '19:59'))).to.equal(false);
      }
    });

    it('reads days as names, abbreviations or ISO numbers (0 and 7 are Sunday) and times as from/to', () => {
      expect(
        parseSchedule({
          enabled: true,
          windows: [{ days: ['Sunday', ' TUE ', 0, 7, 3, 8, -1, 'someday', null], from: '7:05', to: '08:00' }],
        }),
      ).to.deep.equal({
        enabled: true,
        timezone: 'UTC',
        windows: [{ days: [7, 2, 7, 7, 3], start: 7 * 60 + 5, end: 8 * 60 }],
        fallback: null,
      });
    });

    it('lets a window whose end equals its start last 24 hours', () => {
      const s = utcWeek([{ days: ['wed'], start: '09:00', end: '09:00' }]);
      expect(inSchedule(s, at(3, '08:59'))).to.equal(false);
      expect(inSchedule(s, at(3, '09:00'))).to.equal(true);
      expect(inSchedule(s, at(4, '08:59'))).to.equal(true);
      expect(inSchedule(s, at(4, '09:00'))).to.equal(false);
    });

    it('reads times with spaces around them and refuses anything else around the digits', () => {
      expect(utcWeek([{ days: [1], start: ' 09:00 ', end: '10:00' }]).windows).to.have.length(1);
      for (const start of ['x09:00', '09:00x', '09:000', '009:00'])
        expect(utcWeek([{ days: [1], start, end: '10:00' }]).windows, start).to.deep.equal([]);
    });

    it('drops a window with an impossible time or no usable day', () => {
      expect(
        utcWeek([
          { days: ['mon'], start: '09:60', end: '10:00' },
          { days: ['mon'], start: '24:01', end: '10:00' },
          { days: ['mon'], start: '9am', end: '10:00' },
          { days: ['mon'], start: '09:00' },
          { days: ['someday'], start: '09:00', end: '10:00' },
          'x',
        ]).windows,
      ).to.deep.equal([]);
    });

    it('reads the fallback from fallback_destination, fallback_url or fallback', () => {
      for (const key of ['fallback_destination', 'fallback_url', 'fallback'])
        expect(parseSchedule({ enabled: true, windows: [], [key]: 'https://f.example/' })!.fallback).to.equal(
          'https://f.example/',
        );
    });

    it('applies only a schedule that is explicitly enabled', () => {
      expect(parseSchedule({ windows: [] })).to.equal(null);
      expect(parseSchedule({ enabled: 'true', windows: [] })).to.equal(null);
      expect(parseSchedule(null)).to.equal(null);
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

    it('skips empty, null and nested values and writes numbers and booleans as text', () => {
      expect(
        appendUtm('https://x.example/p', {
          source: 'qr',
          medium: '',
          term: null,
          campaign: undefined,
          content: { a: 1 },
          id: 42,
          flag: true,
        }),
      ).to.equal('https://x.example/p?utm_source=qr&utm_id=42&utm_flag=true');
      expect(appendUtm('https://x.example/p', { medium: '', term: null })).to.equal('https://x.example/p');
    });

    it('joins with ? or & as the destination needs, never doubling them', () => {
      expect(appendUtm('https://x.example/p?', { source: 'qr' })).to.equal('https://x.example/p?utm_source=qr');
      expect(appendUtm('https://x.example/p?a=1&', { source: 'qr' })).to.equal('https://x.example/p?a=1&utm_source=qr');
      expect(appendUtm('https://x.example/p?a=1', { source: 'qr' })).to.equal('https://x.example/p?a=1&utm_source=qr');
      expect(appendUtm('https://x.example/#frag', { source: 'qr' })).to.equal('https://x.example/?utm_source=qr#frag');
      expect(appendUtm('https://x.example/?a=1#f?g', { source: 'qr' })).to.equal(
        'https://x.example/?a=1&utm_source=qr#f?g',
      );
    });

    it('adds a key given twice (bare and prefixed) once, and encodes keys and values', () => {
      expect(appendUtm('https://x.example/', { source: 'a', utm_source: 'b', 'utm_x y': 'é&=' })).to.equal(
        'https://x.example/?utm_source=a&utm_x%20y=%C3%A9%26%3D',
      );
    });

    it('applies to the schedule fallback too', () => {
      const schedule = { enabled: true, timezone: 'UTC', windows: [], fallback: 'https://f.example/' };
      expect(decide(code({ schedule, utmParams: { source: 'qr' } }), visitor(), new Date())).to.deep.equal({
        kind: 'redirect',
        url: 'https://f.example/?utm_source=qr',
        matchedRule: -1,
      });
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
