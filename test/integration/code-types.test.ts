import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { decodeQr } from '../helpers/qr-decode.js';

/** Static types: what each destination encodes, exactly as the standard writes it. */
const STATIC_CASES: { type: string; destination: Record<string, unknown>; text: string }[] = [
  {
    type: 'wifi',
    destination: { ssid: 'Café "A";B,C:D\\E', password: 'p;a:s,s"w\\d', hidden: true },
    text: 'WIFI:T:WPA;S:Café \\"A\\"\\;B\\,C\\:D\\\\E;P:p\\;a\\:s\\,s\\"w\\\\d;H:true;;',
  },
  { type: 'wifi', destination: { ssid: 'Guest', encryption: 'nopass' }, text: 'WIFI:T:nopass;S:Guest;;' },
  { type: 'text', destination: { text: 'Hello, world: é ✓' }, text: 'Hello, world: é ✓' },
  {
    type: 'email',
    destination: { to: 'sales@example.com', subject: 'Offer & more', body: 'Line 1\nLine 2' },
    text: 'mailto:sales@example.com?subject=Offer%20%26%20more&body=Line%201%0D%0ALine%202',
  },
  { type: 'sms', destination: { number: '+49 30 1234567', body: 'STOP' }, text: 'SMSTO:+49301234567:STOP' },
  { type: 'phone', destination: { number: '+1 (555) 010-9999' }, text: 'tel:+1(555)010-9999' },
  { type: 'geo', destination: { latitude: 52.520008, longitude: -0.0000001 }, text: 'geo:52.520008,-0.0000001' },
];

describe('code types: static payloads, typed destinations and type changes', function () {
  this.timeout(60_000);
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let n = 0;

  const create = (org: TestOrg, body: Record<string, unknown>) =>
    svc.post('/v1/qr-codes', org.token, { slug: `t${++n}`, domain_ulid: fallback, ...body });

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg();
    b = await svc.createOrg();
    fallback = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
  });
  after(() => svc?.close());

  for (const c of STATIC_CASES) {
    it(`a ${c.type} code is static: not trackable, no count, and its image decodes to ${JSON.stringify(c.text)}`, async () => {
      const res = await create(a, { type: c.type, destination: c.destination });
      expect(res.status, res.text).to.equal(201);
      const code = res.body.data;
      expect(code.type).to.equal(c.type);
      expect(code.trackable).to.equal(false);
      expect(code).not.to.have.property('redirects_count');
      const png = await fetch(`${svc.url}/v1/qr-codes/${code.ulid}/image?format=png&size=512`, {
        headers: { Authorization: `Bearer ${a.token}` },
      });
      expect(png.status).to.equal(200);
      expect(await decodeQr(Buffer.from(await png.arrayBuffer()))).to.equal(c.text);
      const svg = await fetch(`${svc.url}/v1/qr-codes/${code.ulid}/image`, {
        headers: { Authorization: `Bearer ${a.token}` },
      });
      expect(await decodeQr(Buffer.from(await svg.arrayBuffer()), 600)).to.equal(c.text);
    });
  }

  it('a url code stays trackable with its count; redirect is the alias of url', async () => {
    const res = await create(a, { type: 'redirect', destination: 'https://example.com/' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.type).to.equal('url');
    expect(res.body.data.trackable).to.equal(true);
    expect(res.body.data.redirects_count).to.equal(0);
  });

  it('refuses a destination that does not fit its type with 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'wifi', destination: { ssid: 'x'.repeat(33), password: 'p' } }, 'destination.ssid'],
      [{ type: 'wifi', destination: { ssid: 'Home' } }, 'destination.password'],
      [{ type: 'email', destination: { to: 'not an address' } }, 'destination.to'],
      [{ type: 'geo', destination: { latitude: 91, longitude: 0 } }, 'destination.latitude'],
      [{ type: 'phone', destination: { number: 'call me' } }, 'destination.number'],
      [{ type: 'vcard', destination: { organization: 'ACME' } }, 'destination.name'],
      [{ type: 'vcard', destination: { name: 'A', website: 'javascript:alert(1)' } }, 'destination.website'],
      [{ type: 'vcard', destination: { name: 'A', photo: 'https://evil.example/x.png' } }, 'destination.photo'],
      [
        { type: 'links', destination: { title: 'T', links: [{ label: 'x', url: 'javascript:alert(1)' }] } },
        'destination.links.0.url',
      ],
      [
        {
          type: 'links',
          destination: {
            title: 'T',
            links: Array.from({ length: 51 }, () => ({ label: 'l', url: 'https://e.example/' })),
          },
        },
        'destination.links',
      ],
      [{ type: 'app', destination: { name: 'App' } }, 'destination'],
      [
        {
          type: 'event',
          destination: { title: 'E', start: '2027-02-30T10:00', end: '2027-03-01T10:00', timezone: 'Europe/Berlin' },
        },
        'destination.start',
      ],
      [
        {
          type: 'event',
          destination: { title: 'E', start: '2027-03-01T10:00', end: '2027-03-01T09:00', timezone: 'Europe/Berlin' },
        },
        'destination.end',
      ],
      [
        {
          type: 'event',
          destination: { title: 'E', start: '2027-03-01T10:00', end: '2027-03-01T11:00', timezone: 'Mars/Olympus' },
        },
        'destination.timezone',
      ],
      [{ type: 'text', destination: 'https://example.com/' }, 'destination'],
      [{ type: 'url', destination: { ssid: 'x' } }, 'destination.ssid'],
      [{ type: 'nfc', destination: 'https://example.com/' }, 'type'],
      [
        { type: 'vcard', destination: { name: 'A' }, landing_config: { theme: { primary_color: 'red;}body{x' } } },
        'landing_config.theme.primary_color',
      ],
      [
        { type: 'vcard', destination: { name: 'A' }, landing_config: { title: 'x'.repeat(2_000_000) } },
        'landing_config.title',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await create(a, body);
      expect(res.status, `${JSON.stringify(body).slice(0, 200)} ${res.text.slice(0, 300)}`).to.equal(422);
      expect(Object.keys(res.body.errors), res.text.slice(0, 300)).to.include(field);
    }
  });

  it('a static payload longer than any QR symbol holds is 422 naming the limit', async () => {
    const res = await create(a, { type: 'text', destination: { text: 'é'.repeat(1500) } });
    expect(res.status).to.equal(422);
    expect(res.body.errors.destination[0]).to.match(/at most 2953 bytes/);
  });

  it('draws a payload too long for the style’s error-correction level as 422 payload_too_long naming the limit', async () => {
    const style = await svc.post('/v1/qr-styles', a.token, {
      name: 'H',
      config: { qrOptions: { errorCorrectionLevel: 'H' } },
    });
    expect(style.status, style.text).to.equal(201);
    const code = await create(a, {
      type: 'text',
      destination: { text: 'a'.repeat(2000) },
      style_ulid: style.body.data.ulid,
    });
    expect(code.status, code.text).to.equal(201);
    const img = await svc.get(`/v1/qr-codes/${code.body.data.ulid}/image`, a.token);
    expect(img.status).to.equal(422);
    expect(img.body.code).to.equal('payload_too_long');
    expect(img.body.limit).to.equal(1273);
    expect(img.body.message).to.include('at most 1273 bytes');
    const preview = await svc.post('/v1/qr-styles/preview', a.token, {
      config: { qrOptions: { errorCorrectionLevel: 'Q' } },
      text: 'a'.repeat(1700),
    });
    expect(preview.status, preview.text).to.equal(422);
    expect(preview.body.code).to.equal('payload_too_long');
    expect(preview.body.limit).to.equal(1663);
  });

  it('changes a type between dynamic types, never between dynamic and static', async () => {
    const url = (await create(a, { destination: 'https://example.com/' })).body.data;
    const toVcard = await svc.patch(`/v1/qr-codes/${url.ulid}`, a.token, {
      type: 'vcard',
      destination: { name: 'Ada' },
    });
    expect(toVcard.status, toVcard.text).to.equal(200);
    expect(toVcard.body.data.type).to.equal('vcard');
    expect(toVcard.body.data.public_url).to.equal(url.public_url);
    const noDest = await svc.patch(`/v1/qr-codes/${url.ulid}`, a.token, { type: 'links' });
    expect(noDest.status).to.equal(422);
    expect(noDest.body.errors).to.have.property('destination');
    const toWifi = await svc.patch(`/v1/qr-codes/${url.ulid}`, a.token, {
      type: 'wifi',
      destination: { ssid: 'x', encryption: 'nopass' },
    });
    expect(toWifi.status).to.equal(422);
    expect(toWifi.body.errors.type[0]).to.match(/dynamic type and a static one/);
    // Without type, a destination is checked against the stored type.
    const bad = await svc.patch(`/v1/qr-codes/${url.ulid}`, a.token, { destination: 'https://example.com/' });
    expect(bad.status).to.equal(422);
    const good = await svc.patch(`/v1/qr-codes/${url.ulid}`, a.token, { destination: { name: 'Grace' } });
    expect(good.status, good.text).to.equal(200);
    expect(good.body.data.destination).to.deep.equal({ name: 'Grace' });
    const wifi = (await create(a, { type: 'wifi', destination: { ssid: 'x', encryption: 'nopass' } })).body.data;
    const back = await svc.patch(`/v1/qr-codes/${wifi.ulid}`, a.token, {
      type: 'url',
      destination: 'https://example.com/',
    });
    expect(back.status).to.equal(422);
    expect(back.body.errors.type[0]).to.match(/Create a new code/);
  });

  it('another organization’s typed code is not found', async () => {
    const code = (await create(a, { type: 'geo', destination: { latitude: 1, longitude: 2 } })).body.data;
    expect((await svc.get(`/v1/qr-codes/${code.ulid}`, b.token)).status).to.equal(404);
    expect((await svc.get(`/v1/qr-codes/${code.ulid}/image`, b.token)).status).to.equal(404);
    expect((await svc.patch(`/v1/qr-codes/${code.ulid}`, b.token, { name: 'x' })).status).to.equal(404);
  });
});
