import { expect } from 'chai';
import { startTestService, type TestService } from '../helpers/harness.js';
import { boot } from '../../server/bootstrap.js';
import { notifyBarrier } from '../helpers/notify-barrier.js';
import type { AppContext } from '../../server/context.js';
import { waitFor } from '../helpers/poll.js';

describe('principal cache', () => {
  let svc: TestService;
  let other: AppContext;
  before(async () => {
    svc = await startTestService();
    // A second process's context on the same database, with its own cache and LISTEN connection.
    other = await boot(svc.app.config, svc.app.log, {
      databaseUrl: svc.app.databaseUrl,
      sharedClickHouse: svc.app.ch,
      migrate: false,
    });
  });
  after(async () => {
    await other.close();
    await svc.close();
  });

  it('serves repeated calls from the cache and still checks the secret', async () => {
    const { token } = await svc.createOrg();
    // Creating the organization notifies auth_cache; once that has arrived, nothing evicts the entry.
    await notifyBarrier(svc.app, 'auth_cache', '-1');
    const before = { ...svc.app.principals.stats };
    for (let i = 0; i < 5; i++) expect((await svc.get('/v1/status', token)).status).to.equal(200);
    expect(svc.app.principals.stats.misses - before.misses).to.equal(1);
    expect(svc.app.principals.stats.hits - before.hits).to.equal(4);
    const [id] = token.split('|');
    expect((await svc.get('/v1/status', `${id}|${'Z'.repeat(48)}`)).status).to.equal(401);
    // The cached secret is compared whole: the last character, a secret cut short or one longer.
    const secret = token.slice(id.length + 1);
    const last = secret.endsWith('a') ? 'b' : 'a';
    for (const wrong of [secret.slice(0, -1) + last, secret.slice(0, -1), secret + 'a', secret.slice(0, 40)]) {
      expect((await svc.get('/v1/status', `${id}|${wrong}`)).status, wrong).to.equal(401);
    }
    expect(svc.app.principals.stats.misses - before.misses).to.equal(1);
  });

  it('rejects a token revoked in another process once the notification arrives', async () => {
    const { org, token } = await svc.createOrg();
    const now = () => new Date();
    const principal = await other.principals.authenticate(`Bearer ${token}`, now());
    expect(principal.org.id).to.equal(org.id);
    await other.principals.authenticate(`Bearer ${token}`, now()); // cached in the other process
    const del = await svc.delete(`/v1/tokens/${token.split('|')[0]}`, token);
    expect(del.status).to.equal(204);
    expect((await svc.get('/v1/status', token)).status).to.equal(401); // at once in this process
    await waitFor(async () =>
      other.principals.authenticate(`Bearer ${token}`, now()).then(
        () => false,
        (err: { status?: number }) => err.status === 401,
      ),
    );
  });

  it('sees a plan change made elsewhere', async () => {
    const { org, token } = await svc.createOrg({ plan: 'business_monthly' });
    expect((await other.principals.authenticate(`Bearer ${token}`, new Date())).org.plan?.code).to.equal(
      'business_monthly',
    );
    const enterprise = await svc.app.db('plans').where({ code: 'enterprise_monthly' }).first('id');
    await svc.app.db('organizations').where({ id: org.id }).update({ plan_id: enterprise.id });
    await waitFor(
      async () =>
        (await other.principals.authenticate(`Bearer ${token}`, new Date())).org.plan?.code === 'enterprise_monthly',
    );
  });
});
