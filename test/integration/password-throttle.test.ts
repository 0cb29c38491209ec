// The password form's throttle under concurrency and across redirect processes: attempts are
// counted in Postgres before the password is checked, so however many guesses arrive at once, at
// most 5 per visitor and code per window reach scrypt.
import { expect } from 'chai';
import { startTestService, type TestService } from '../helpers/harness.js';
import { hashPassword } from '../../server/qr-codes/password.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { fallbackDomainId, hit, insertCode } from './redirect-fixtures.js';

const FALLBACK = 'localhost:3001';

describe('password throttle', function () {
  this.timeout(120_000);
  let svc: TestService;
  let one: RedirectListener;
  let two: RedirectListener;
  let org: { id: number; slug: string };
  let fallbackId: number;
  let n = 0;

  before(async () => {
    // 127.0.0.1 is a trusted proxy, so X-Forwarded-For picks the visitor's address.
    svc = await startTestService({ api: false, config: { trustProxy: ['127.0.0.1'] } });
    // Two redirect listeners with their own handlers and throttles, as two processes would have.
    one = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 50 });
    two = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 50 });
    const created = await svc.createOrg({ slug: 'vault' });
    org = { id: created.org.id, slug: created.org.slug };
    fallbackId = await fallbackDomainId(svc.app);
  });
  after(async () => {
    await two?.close();
    await one?.close();
    await svc?.close();
  });

  async function protectedCode(password: string): Promise<string> {
    const slug = `p${++n}`;
    await insertCode(svc.app, {
      orgId: org.id,
      orgSlug: org.slug,
      domainId: fallbackId,
      slug,
      destination: 'https://example.com/vault',
      password_hash: await hashPassword(password),
    });
    return `/${org.slug}/${slug}`;
  }

  const post = (port: number, path: string, password: string, ip: string) =>
    hit(port, FALLBACK, path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': ip },
      body: new URLSearchParams({ password }).toString(),
    });

  const checks = async () => (await svc.app.metrics.passwordChecks.get()).values[0]?.value ?? 0;

  it('lets at most 5 of 250 concurrent guesses from one address reach the password check', async () => {
    const path = await protectedCode('pin-0400');
    const before = await checks();
    const guesses = Array.from({ length: 250 }, (_, i) => `pin-${String(i).padStart(4, '0')}`).filter(
      (g) => g !== 'pin-0400',
    );
    const answers = await Promise.all(guesses.map((g) => post(one.port, path, g, '203.0.113.9')));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).to.have.length(5);
    expect(statuses.filter((s) => s === 429)).to.have.length(guesses.length - 5);
    expect(statuses.filter((s) => s === 303)).to.have.length(0);
    expect((await checks()) - before).to.equal(5);
    // Locked for the window, even with the right password.
    const right = await post(one.port, path, 'pin-0400', '203.0.113.9');
    expect(right.status).to.equal(429);
    expect(Number(right.headers['retry-after'])).to.be.within(1, 300);
    // The count is kept per visitor under a keyed hash: no address is stored.
    const rows = await svc.app.db('password_attempts').select('visitor', 'attempts');
    expect(rows).to.have.length(1);
    expect(rows[0].attempts).to.equal(guesses.length + 1);
    expect(Buffer.from(rows[0].visitor).toString('latin1')).not.to.include('203.0.113');
  });

  it('shares the count between redirect processes', async () => {
    const path = await protectedCode('shared-secret');
    const ip = '203.0.113.10';
    for (let i = 0; i < 3; i++) expect((await post(one.port, path, `wrong-${i}`, ip)).status).to.equal(401);
    for (let i = 3; i < 5; i++) expect((await post(two.port, path, `wrong-${i}`, ip)).status).to.equal(401);
    expect((await post(two.port, path, 'shared-secret', ip)).status).to.equal(429);
    expect((await post(one.port, path, 'shared-secret', ip)).status).to.equal(429);
    // Another address, and the same address once the window has passed, may try again.
    expect((await post(two.port, path, 'shared-secret', '203.0.113.11')).status).to.equal(303);
    svc.clock.advance(5 * 60_000 + 1000);
    try {
      expect((await post(one.port, path, 'shared-secret', ip)).status).to.equal(303);
    } finally {
      svc.clock.reset();
    }
  });
});
