import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import type { AppContext } from '../../server/context.js';
import { createCodes } from '../../server/qr-codes/service.js';
import { DISABLE_AFTER_MS, drainEndpoint, type AttemptResult } from '../../server/webhooks/delivery.js';
import { startWorker } from '../../workers/index.js';
import { fallbackDomain } from '../helpers/fixtures.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { verified, WebhookReceiver } from '../helpers/webhook-receiver.js';

const CODE_EVENTS = ['code.created', 'code.updated', 'code.deleted'];

/** Runs the endpoint's job now (it drains the due deliveries) and returns each outcome. */
async function drainNow(app: AppContext, webhookUlid: string): Promise<AttemptResult[]> {
  const { id } = await app.db('webhook_endpoints').where({ ulid: webhookUlid }).first('id');
  return [...(await drainEndpoint(app, id)).values()];
}

describe('webhooks', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let domainUlid: string;

  before(async () => {
    receiver = await WebhookReceiver.start();
    svc = await startTestService({ config: { webhookAllowedTargets: ['127.0.0.1/32'], webhookTimeoutMs: 300 } });
    domainUlid = (await fallbackDomain(svc.app)).ulid;
  });
  after(async () => {
    await svc.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = () => ({ status: 200 });
  });
  afterEach(() => svc.clock.reset());

  async function endpoint(o: TestOrg, events = CODE_EVENTS, url = receiver.url()) {
    const res = await svc.post('/v1/webhooks', o.token, { url, events, description: 'test' });
    expect(res.status, res.text).to.equal(201);
    return { ulid: res.body.data.ulid as string, secret: res.body.secret as string };
  }

  async function createCode(o: TestOrg, slug: string) {
    const res = await svc.post('/v1/qr-codes', o.token, {
      slug,
      destination: `https://example.com/${slug}`,
      domain_ulid: domainUlid,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.data;
  }

  const drain = (webhookUlid: string) => drainNow(svc.app, webhookUlid);

  /** The pending deliveries of an endpoint, oldest first. */
  async function deliveryIds(webhookUlid: string, status = 'pending'): Promise<number[]> {
    return svc.app
      .db('webhook_deliveries as d')
      .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
      .where({ 'w.ulid': webhookUlid, 'd.status': status })
      .orderBy('d.id')
      .pluck('d.id');
  }

  describe('endpoints', () => {
    it('creates an endpoint whose whsec_ secret is shown once, and reads, lists, changes and deletes it', async () => {
      const o = await svc.createOrg();
      const created = await svc.post('/v1/webhooks', o.token, { url: receiver.url(), events: ['code.created'] });
      expect(created.status).to.equal(201);
      expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(created.body.data).to.include({ url: receiver.url(), enabled: true, disabled_reason: null });
      const path = `/v1/webhooks/${created.body.data.ulid}`;
      const read = await svc.get(path, o.token);
      expect(read.body.data).to.deep.equal(created.body.data);
      expect(read.text).to.not.include('whsec_');
      expect((await svc.get('/v1/webhooks', o.token)).body.data).to.have.length(1);
      const patched = await svc.patch(path, o.token, { events: ['code.deleted'], enabled: false });
      expect(patched.body.data).to.include({ enabled: false });
      expect(patched.body.data.events).to.deep.equal(['code.deleted']);
      expect((await svc.delete(path, o.token)).status).to.equal(204);
      expect((await svc.get(path, o.token)).status).to.equal(404);
    });

    it('refuses URLs that are not http(s), carry credentials or name a private address, and unknown events', async () => {
      const o = await svc.createOrg();
      for (const url of [
        'ftp://example.com/x',
        'https://user:pw@example.com/',
        'http://10.0.0.1/x',
        'http://[::1]:80/',
      ]) {
        const res = await svc.post('/v1/webhooks', o.token, { url, events: ['code.created'] });
        expect(res.status, url).to.equal(422);
        expect(res.body.errors, url).to.have.key('url');
      }
      const bad = await svc.post('/v1/webhooks', o.token, { url: receiver.url(), events: ['code.exploded'] });
      expect(bad.status).to.equal(422);
      expect(await svc.app.db('webhook_endpoints').where({ org_id: o.org.id })).to.have.length(0);
    });

    it('answers 404 for another organization’s endpoint and 403 without webhooks.manage (editors lack it)', async () => {
      const a = await svc.createOrg();
      const b = await svc.createOrg();
      const { ulid } = await endpoint(a);
      const path = `/v1/webhooks/${ulid}`;
      for (const [method, p] of [
        ['GET', path],
        ['PATCH', path],
        ['DELETE', path],
        ['POST', `${path}/rotate-secret`],
        ['GET', `${path}/deliveries`],
      ]) {
        const res = await svc.request(method, p, { token: b.token, body: method === 'PATCH' ? {} : undefined });
        expect(res.status, `${method} ${p}`).to.equal(404);
      }
      const editor = await svc.createToken(a.org, { role: 'editor' });
      const refused = await svc.get('/v1/webhooks', editor);
      expect(refused.status).to.equal(403);
      expect(refused.body.required_ability).to.equal('webhooks.manage');
      const admin = await svc.createToken(a.org, { role: 'admin' });
      expect((await svc.get('/v1/webhooks', admin)).status).to.equal(200);
    });
  });

  describe('delivery', () => {
    it('delivers code.created, code.updated and code.deleted through the worker, each verified with standardwebhooks', async () => {
      const o = await svc.createOrg();
      const { ulid, secret } = await endpoint(o);
      const runner = await startWorker(svc.app);
      try {
        const code = await createCode(o, 'hooked');
        expect((await svc.patch(`/v1/qr-codes/${code.ulid}`, o.token, { name: 'Renamed' })).status).to.equal(200);
        expect((await svc.delete(`/v1/qr-codes/${code.ulid}`, o.token)).status).to.equal(204);
        const got = await receiver.waitFor(3);
        const events = got.map((r) => verified(secret, r));
        expect(events.map((e) => e.type).sort()).to.deep.equal(['code.created', 'code.deleted', 'code.updated']);
        const updated = events.find((e) => e.type === 'code.updated')!;
        expect(updated.data).to.include({ ulid: code.ulid, name: 'Renamed' });
        expect(new Set(got.map((r) => r.headers['webhook-id'])).size).to.equal(3);
        for (const r of got) expect(r.headers['webhook-id']).to.match(/^msg_[0-9A-Z]{26}$/);
      } finally {
        await runner.stop();
      }
      const log = await svc.get(`/v1/webhooks/${ulid}/deliveries`, o.token);
      expect(log.body.data).to.have.length(3);
      for (const d of log.body.data) {
        expect(d).to.include({ status: 'succeeded', attempts: 1, response_status: 200 });
        expect(d.log).to.have.length(1);
        expect(d.log[0].latency_ms).to.be.a('number');
      }
    });

    it('writes no event for a change that rolls back, and none when no endpoint wants the type', async () => {
      const o = await svc.createOrg();
      await endpoint(o, ['code.deleted']);
      await createCode(o, 'not-subscribed');
      const failed = await svc.app.db
        .transaction(async (trx) => {
          await createCodes(
            svc.app,
            o.org,
            [{ slug: 'rolled-back', destination: 'https://example.com/', domain_ulid: domainUlid }],
            { trx },
          );
          await svc.app
            .db('webhook_endpoints')
            .where({ org_id: o.org.id })
            .update({ events: ['code.created'] });
          throw new Error('roll back');
        })
        .catch((err: Error) => err.message);
      expect(failed).to.equal('roll back');
      expect(await svc.app.db('webhook_events').where({ org_id: o.org.id })).to.have.length(0);
    });

    it('retries after a 500 and after a timeout with the same webhook-id, three retries within the first minute', async () => {
      const o = await svc.createOrg();
      const { ulid, secret } = await endpoint(o, ['code.created']);
      receiver.answer = (n) => (n === 0 ? { status: 500 } : n === 1 ? 'hang' : { status: 204 });
      await createCode(o, 'retried');
      const [id] = await deliveryIds(ulid);
      const start = svc.clock.now().getTime();
      expect(await drain(ulid)).to.deep.equal(['retrying']);
      let row = await svc.app.db('webhook_deliveries').where({ id }).first();
      expect(row).to.include({ attempts: 1, response_status: 500, status: 'pending' });
      expect(row.next_attempt_at.getTime() - start).to.be.within(5000, 5500);
      // The endpoint's job is queued for that retry; nothing is due before it.
      const job = await svc.app.db.raw(`select run_at from graphile_worker._private_jobs where key = ?`, [
        `webhook:${row.endpoint_id}`,
      ]);
      expect(job.rows[0].run_at.getTime()).to.equal(row.next_attempt_at.getTime());
      expect(await drain(ulid)).to.deep.equal([]);

      svc.clock.advance(5000);
      expect(await drain(ulid)).to.deep.equal(['retrying']);
      row = await svc.app.db('webhook_deliveries').where({ id }).first();
      expect(row.error).to.equal('No answer within 300 ms.');
      expect(row.response_status).to.equal(null);

      svc.clock.advance(15_000);
      expect(await drain(ulid)).to.deep.equal(['succeeded']);
      const got = await receiver.waitFor(3);
      expect(new Set(got.map((r) => r.headers['webhook-id'])).size).to.equal(1);
      for (const r of got) expect(verified(secret, r).type).to.equal('code.created');
      const log = (await svc.get(`/v1/webhooks/${ulid}/deliveries`, o.token)).body.data[0];
      expect(log.status).to.equal('succeeded');
      expect(log.log.map((a: { response_status: number | null }) => a.response_status)).to.deep.equal([500, null, 204]);
    });

    it('never follows a redirect', async () => {
      const o = await svc.createOrg();
      const { ulid } = await endpoint(o, ['code.created']);
      receiver.answer = () => ({ status: 302, headers: { Location: receiver.url('/elsewhere') } });
      await createCode(o, 'redirected');
      const [id] = await deliveryIds(ulid);
      expect(await drain(ulid)).to.deep.equal(['retrying']);
      const row = await svc.app.db('webhook_deliveries').where({ id }).first();
      expect(row.error).to.match(/^Redirect not followed \(302/);
      expect(receiver.received.map((r) => r.path)).to.deep.equal(['/hook']);
    });

    it('disables an endpoint failing for 3 days, flags it in the API and tells the next healthy endpoint', async () => {
      const o = await svc.createOrg();
      const failing = await endpoint(o, ['code.created'], receiver.url('/failing'));
      const healthy = await endpoint(o, ['code.updated'], receiver.url('/healthy'));
      receiver.answer = (_n, req) => (req.path === '/failing' ? { status: 503 } : { status: 200 });
      await createCode(o, 'doomed');
      expect(await drain(failing.ulid)).to.deep.equal(['retrying']);
      svc.clock.advance(DISABLE_AFTER_MS - 60_000);
      expect(await drain(failing.ulid)).to.deep.equal(['retrying']);
      svc.clock.advance(60_000);
      expect(await drain(failing.ulid)).to.deep.equal(['failed']);

      const flagged = (await svc.get(`/v1/webhooks/${failing.ulid}`, o.token)).body.data;
      expect(flagged).to.include({ enabled: false, disabled_reason: 'failing' });
      expect(flagged.failing_since).to.be.a('string');
      // The notice goes to the healthy endpoint although it lists only code.updated.
      expect(await drain(healthy.ulid)).to.deep.equal(['succeeded']);
      const got = receiver.received.filter((r) => r.path === '/healthy');
      expect(got).to.have.length(1);
      const event = JSON.parse(got[0].body);
      expect(event.type).to.equal('webhook.disabled');
      expect(event.data).to.deep.include({
        reason: 'failing',
        webhook: { ulid: failing.ulid, url: receiver.url('/failing') },
      });
      // A disabled endpoint gets nothing more until it is enabled again.
      await createCode(o, 'after');
      expect(await deliveryIds(failing.ulid)).to.deep.equal([]);
      const enabled = await svc.patch(`/v1/webhooks/${failing.ulid}`, o.token, { enabled: true });
      expect(enabled.body.data).to.include({ enabled: true, disabled_reason: null, failing_since: null });
    });

    it('disables an endpoint at once when it answers 410 Gone', async () => {
      const o = await svc.createOrg();
      const { ulid } = await endpoint(o, ['code.created']);
      receiver.answer = () => ({ status: 410 });
      await createCode(o, 'gone');
      expect(await drain(ulid)).to.deep.equal(['failed']);
      expect((await svc.get(`/v1/webhooks/${ulid}`, o.token)).body.data).to.include({
        enabled: false,
        disabled_reason: 'gone',
      });
    });

    it('signs with the old and the new secret for 24 hours after a rotation, then with the new one only', async () => {
      const o = await svc.createOrg();
      const { ulid, secret: old } = await endpoint(o, ['code.created']);
      const rotated = await svc.post(`/v1/webhooks/${ulid}/rotate-secret`, o.token);
      expect(rotated.status).to.equal(200);
      const fresh = rotated.body.secret as string;
      expect(fresh).to.not.equal(old);
      expect(rotated.body.data.previous_secret_expires_at).to.be.a('string');

      await createCode(o, 'rotated-1');
      expect(await drain(ulid)).to.deep.equal(['succeeded']);
      const [during] = await receiver.waitFor(1);
      expect(during.headers['webhook-signature'].split(' ')).to.have.length(2);
      expect(verified(old, during).type).to.equal('code.created');
      expect(verified(fresh, during).type).to.equal('code.created');

      svc.clock.advance(24 * 3600_000 + 1000);
      await createCode(o, 'rotated-2');
      expect(await drain(ulid)).to.deep.equal(['succeeded']);
      const after = (await receiver.waitFor(2))[1];
      // Signed a day ahead of the wall clock, so the library's sign() checks it rather than verify().
      const sent = new Date(Number(after.headers['webhook-timestamp']) * 1000);
      const sign = (secret: string) => new Webhook(secret).sign(after.headers['webhook-id'], sent, after.body);
      expect(after.headers['webhook-signature']).to.equal(sign(fresh));
      expect(sign(old)).to.not.equal(sign(fresh));
    });

    it('redelivers a delivery on request: one more attempt with the same webhook-id', async () => {
      const o = await svc.createOrg();
      const { ulid, secret } = await endpoint(o, ['code.created']);
      await createCode(o, 'again');
      expect(await drain(ulid)).to.deep.equal(['succeeded']);
      const d = (await svc.get(`/v1/webhooks/${ulid}/deliveries`, o.token)).body.data[0];
      const res = await svc.post(`/v1/webhooks/${ulid}/deliveries/${d.ulid}/redeliver`, o.token);
      expect(res.status).to.equal(202);
      expect(res.body.data.status).to.equal('pending');
      expect(await drain(ulid)).to.deep.equal(['succeeded']);
      const got = await receiver.waitFor(2);
      expect(got[1].headers['webhook-id']).to.equal(got[0].headers['webhook-id']);
      expect(verified(secret, got[1]).type).to.equal('code.created');
      const log = (await svc.get(`/v1/webhooks/${ulid}/deliveries`, o.token)).body.data[0].log;
      expect(log.map((a: { manual: boolean }) => a.manual)).to.deep.equal([false, true]);
      const other = await svc.createOrg();
      expect((await svc.post(`/v1/webhooks/${ulid}/deliveries/${d.ulid}/redeliver`, other.token)).status).to.equal(404);
    });
  });
});

describe('webhooks without allowed targets (SSRF)', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await WebhookReceiver.start();
    svc = await startTestService();
  });
  after(async () => {
    await svc.close();
    await receiver.close();
  });

  it('refuses a host name that resolves to a loopback address, after DNS resolution, and sends nothing', async () => {
    const o = await svc.createOrg();
    const literal = await svc.post('/v1/webhooks', o.token, { url: receiver.url(), events: ['code.created'] });
    expect(literal.status).to.equal(422);
    const named = await svc.post('/v1/webhooks', o.token, {
      url: `http://localhost:${receiver.port}/hook`,
      events: ['code.created'],
    });
    expect(named.status).to.equal(201);
    const domain = await fallbackDomain(svc.app);
    await createCodes(svc.app, o.org, [
      { slug: 'ssrf', destination: 'https://example.com/', domain_ulid: domain.ulid },
    ]);
    const [id] = await svc.app.db('webhook_deliveries').where({ org_id: o.org.id }).pluck('id');
    expect(await drainNow(svc.app, named.body.data.ulid)).to.deep.equal(['retrying']);
    const row = await svc.app.db('webhook_deliveries').where({ id }).first();
    expect(row.error).to.match(/^localhost resolves to (127\.0\.0\.1|::1), a private, loopback or link-local address/);
    expect(receiver.received).to.have.length(0);
  });
});
