import { expect } from 'chai';
import type { FieldErrors } from '../../server/errors.js';
import { Limiter, PasswordWorkBusy } from '../../server/qr-codes/password.js';
import { decide, parseRules, parseSchedule, type Visitor } from '../../server/qr-codes/routing.js';
import { createCodeBody } from '../../server/qr-codes/schema.js';
import { publicUrl } from '../../server/qr-codes/service.js';
import { slugKey } from '../../server/qr-codes/slug.js';
import {
  checkDates,
  checkDestination,
  checkRouting,
  checkSchedule,
  slugProblem,
  withNormalisedUrls,
} from '../../server/qr-codes/validate.js';
import { Validators } from '../../server/schemas/validation.js';

const visitor = (over: Partial<Visitor> = {}): Visitor => ({
  device: 'desktop',
  os: 'Windows',
  country: 'US',
  language: 'en',
  visitorHash: '42',
  ...over,
});

describe('QR code validation (pure)', () => {
  it('checks slugs: 1 to 64 of [A-Za-z0-9_-]', () => {
    expect(slugProblem('Summer_2026-x')).to.equal(null);
    expect(slugProblem('x'.repeat(64))).to.equal(null);
    expect(slugProblem('x'.repeat(65))).to.match(/1 to 64/);
    expect(slugProblem('a/b')).to.match(/1 to 64/);
    expect(slugProblem('é')).to.match(/1 to 64/);
    expect(slugProblem('')).to.equal('This field is required.');
    expect(slugKey('Acme', 'Spring')).to.equal('acme/spring');
  });

  it('reports the destination URL under destination or destination.url', () => {
    const e: FieldErrors = {};
    checkDestination(e, { url: 'ftp://x' });
    checkDestination(e, 'nope', 'other');
    checkDestination(e, { url: 'https://x.com', extra: 1 }, 'third');
    expect(e).to.deep.equal({
      'destination.url': ['Must be an http or https URL.'],
      other: ['Must be a valid http or https URL, e.g. https://example.com/page.'],
      third: ['Must be an http or https URL, or an object with only a url key.'],
    });
  });

  it('needs a destination or variants on every rule, not both', () => {
    const e: FieldErrors = {};
    checkRouting(e, {
      rules: [
        {},
        { destination: 'https://a.com', variants: [{ destination: 'https://b.com' }] },
        { variants: [{ destination: 'x' }] },
      ],
    });
    expect(e).to.deep.equal({
      'routing.rules.0': ['A rule needs either a destination or variants.'],
      'routing.rules.1': ['A rule needs either a destination or variants.'],
      'routing.rules.2.variants.0.destination': ['Must be a valid http or https URL, e.g. https://example.com/page.'],
    });
  });

  it('checks the schedule time zone, windows and fallback', () => {
    const e: FieldErrors = {};
    checkSchedule(e, {
      enabled: true,
      timezone: 'Nowhere/City',
      windows: [{ start: '10:00', end: '10:00' }],
      fallback_destination: 'mailto:x@y.z',
    });
    expect(e).to.deep.equal({
      'schedule.timezone': ['Must be a valid IANA time zone, e.g. Europe/Berlin.'],
      'schedule.windows.0.end': ['Must differ from start.'],
      'schedule.fallback_destination': ['Must be an http or https URL.'],
    });
    const off: FieldErrors = {};
    checkSchedule(off, { enabled: false });
    expect(off).to.deep.equal({});
  });

  it('returns every URL of a code normalised, in the shape given, and leaves absent keys absent', () => {
    const e: FieldErrors = {};
    const out = withNormalisedUrls(e, {
      destination: { url: 'https://例え.jp/café' },
      routing: {
        rules: [
          { conditions: {}, destination: 'HTTPS://A.example/ü' },
          { conditions: {}, variants: [{ destination: 'https://b.example/€', weight: 1 }] },
        ],
      },
      schedule: { enabled: false, fallback_destination: 'https://c.example/ß?q=é' },
    });
    expect(e).to.deep.equal({});
    expect(out).to.deep.equal({
      destination: { url: 'https://xn--r8jz45g.jp/caf%C3%A9' },
      routing: {
        rules: [
          { conditions: {}, destination: 'https://a.example/%C3%BC' },
          { conditions: {}, variants: [{ destination: 'https://b.example/%E2%82%AC', weight: 1 }] },
        ],
      },
      schedule: { enabled: false, fallback_destination: 'https://c.example/%C3%9F?q=%C3%A9' },
    });
    expect(withNormalisedUrls(e, { name: 'x' } as { name: string; destination?: string })).to.deep.equal({ name: 'x' });
  });

  it('requires date_begin before expire_at', () => {
    const e: FieldErrors = {};
    checkDates(e, new Date('2026-01-02'), new Date('2026-01-01'));
    checkDates(e, null, new Date('2026-01-01'));
    expect(e).to.deep.equal({ expire_at: ['Must be after date_begin.'] });
  });

  it('builds the public URL: origin/org/slug on a fallback origin, https://host/slug on a custom domain', () => {
    expect(
      publicUrl({ type: 'fallback', host: 'localhost:3001', origin: 'http://localhost:3001/' }, 'acme/spring'),
    ).to.equal('http://localhost:3001/acme/spring');
    expect(publicUrl({ type: 'custom', host: 'go.acme.com', origin: null }, 'acme/spring')).to.equal(
      'https://go.acme.com/spring',
    );
  });
});

describe('stored routing and schedule are what the redirect evaluates', () => {
  const validators = new Validators();
  const routing = {
    rules: [
      { conditions: { device: ['mobile'], os: ['iOS'] }, destination: 'https://apps.apple.com/app' },
      {
        conditions: { country: ['de'] },
        variants: [
          { destination: 'https://a.example/', weight: 1 },
          { destination: 'https://b.example/', weight: 1 },
        ],
      },
    ],
  };
  const schedule = {
    enabled: true,
    timezone: 'Europe/Berlin',
    windows: [{ days: ['mon'], start: '09:00', end: '17:00' }],
    fallback_destination: 'https://closed.example/',
  };

  it('the create schema accepts the shapes', () => {
    const body = {
      slug: 's',
      destination: 'https://x.com',
      domain_ulid: '01HZZZZZZZZZZZZZZZZZZZZZZZ',
      routing,
      schedule,
    };
    expect(() => validators.check(createCodeBody, 'body', body)).to.not.throw();
  });

  it('parses every rule and window as given', () => {
    expect(parseRules(routing)).to.deep.equal([
      {
        device: ['mobile'],
        os: ['ios'],
        country: null,
        language: null,
        destination: 'https://apps.apple.com/app',
        variants: null,
      },
      {
        device: null,
        os: null,
        country: ['DE'],
        language: null,
        destination: null,
        variants: [
          { destination: 'https://a.example/', weight: 1 },
          { destination: 'https://b.example/', weight: 1 },
        ],
      },
    ]);
    expect(parseSchedule(schedule)).to.deep.equal({
      enabled: true,
      timezone: 'Europe/Berlin',
      windows: [{ days: [1], start: 540, end: 1020 }],
      fallback: 'https://closed.example/',
    });
  });

  it('decides with them: rule match inside the window, fallback outside', () => {
    const code = {
      id: 7,
      status: 'active',
      destination: { url: 'https://default.example/' },
      routing,
      schedule,
      dateBegin: null,
      expireAt: null,
      utmParams: { source: 'qr' },
    };
    const monday10 = new Date('2026-11-23T09:00:00Z'); // 10:00 in Berlin
    expect(decide(code, visitor({ device: 'mobile', os: 'iOS' }), monday10)).to.deep.equal({
      kind: 'redirect',
      url: 'https://apps.apple.com/app?utm_source=qr',
      matchedRule: 0,
    });
    expect(decide(code, visitor(), monday10)).to.deep.equal({
      kind: 'redirect',
      url: 'https://default.example/?utm_source=qr',
      matchedRule: -1,
    });
    expect(decide(code, visitor(), new Date('2026-11-24T09:00:00Z'))).to.deep.equal({
      kind: 'redirect',
      url: 'https://closed.example/?utm_source=qr',
      matchedRule: -1,
    });
  });
});

describe('Limiter (bounded password work)', () => {
  it('runs at most max tasks at once, in arrival order, and refuses waiters beyond its queue', async () => {
    const limiter = new Limiter(2, 3);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const gates: (() => void)[] = [];
    const task = (i: number) =>
      limiter.run(async () => {
        running++;
        peak = Math.max(peak, running);
        order.push(i);
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
        return i;
      });
    const all = [0, 1, 2, 3, 4].map(task);
    const refused = await task(5).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(PasswordWorkBusy);
    while (order.length < 5 || gates.length) {
      await new Promise((r) => setImmediate(r));
      gates.shift()?.();
    }
    expect(await Promise.all(all)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(order).to.deep.equal([0, 1, 2, 3, 4]);
    expect(peak).to.equal(2);
    expect(limiter.queued).to.equal(0);
  });
});
