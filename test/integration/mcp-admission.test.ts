import { expect } from 'chai';
import { startTestService, type TestService } from '../helpers/harness.js';
import { callTool, comparableHeaders, postMcp, rpc, toolError, toolOk } from './mcp-helpers.js';

describe('MCP shares rate limit and metering with REST', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  afterEach(() => svc.clock.reset());
  after(() => svc.close());

  async function callsThisMonth(orgId: number): Promise<number> {
    const row = await svc.app.db('api_usage_months').where({ org_id: orgId }).first('calls');
    return row ? Number(row.calls) : 0;
  }

  it('counts tool calls in the organization’s minute window with REST, and answers the 429 exactly as REST', async () => {
    svc.clock.set('2026-04-01T10:00:30.000Z');
    const { token } = await svc.createOrg({ plan: 'business_monthly' });
    // The free methods take nothing from the window.
    await rpc(svc, token, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    await rpc(svc, token, 'tools/list', {});
    await rpc(svc, token, 'ping');
    const first = await callTool(svc, token, 'organization_read');
    expect(first.http.headers.get('x-ratelimit-limit')).to.equal('60');
    expect(first.http.headers.get('x-ratelimit-remaining')).to.equal('59');
    expect(first.http.headers.get('x-ratelimit-reset')).to.equal(String(Date.parse('2026-04-01T10:01:00.000Z') / 1000));
    for (let i = 0; i < 29; i++) {
      expect((await svc.get('/v1/organization', token)).status).to.equal(200);
      await toolOk(svc, token, 'organization_read');
    }
    const last = await callTool(svc, token, 'organization_read');
    expect(last.isError).to.equal(false);
    expect(last.http.headers.get('x-ratelimit-remaining')).to.equal('0');
    const rest = await svc.get('/v1/organization', token);
    const mcp = await rpc(svc, token, 'tools/call', { name: 'organization_read', arguments: {} });
    expect(rest.status).to.equal(429);
    expect(mcp.status).to.equal(429);
    expect(mcp.text).to.equal(rest.text);
    expect(comparableHeaders(mcp.headers)).to.deep.equal(comparableHeaders(rest.headers));
    expect(mcp.headers.get('retry-after')).to.equal('30');
    expect(mcp.body).to.have.all.keys('message', 'code', 'retry_after', 'documentation');

    // tools/list and initialize still answer: they are not rate limited.
    expect((await rpc(svc, token, 'tools/list', {})).status).to.equal(200);

    // Inside a (2025-03-26) batch the 429 is the tool's error; the batch itself answers.
    const batch = await postMcp(svc, token, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'organization_read', arguments: {} } },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    expect(batch.status).to.equal(200);
    expect(batch.body[0].result.isError).to.equal(true);
    expect(JSON.parse(batch.body[0].result.content[0].text)).to.deep.equal(rest.body);
    expect(batch.body[1].result).to.deep.equal({});
  });

  it('takes the raw-export tool from the 6-per-minute bucket shared with REST', async () => {
    svc.clock.set('2026-04-01T11:00:10.000Z');
    const { token } = await svc.createOrg({ plan: 'business_monthly' });
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    const code = (
      await toolOk(svc, token, 'codes_create', { slug: 'raw', destination: 'https://example.com', domain_ulid: domain })
    ).data.ulid;
    for (let i = 0; i < 3; i++) await toolOk(svc, token, 'analytics_code_export', { code_ulid: code });
    for (let i = 0; i < 3; i++)
      expect((await svc.get(`/v1/analytics/qr-codes/${code}/raw-export`, token)).status).to.equal(200);
    const mcp = await rpc(svc, token, 'tools/call', { name: 'analytics_code_export', arguments: { code_ulid: code } });
    const rest = await svc.get(`/v1/analytics/qr-codes/${code}/raw-export`, token);
    expect(rest.status).to.equal(429);
    expect(mcp.status).to.equal(429);
    expect(mcp.text).to.equal(rest.text);
    expect(comparableHeaders(mcp.headers)).to.deep.equal(comparableHeaders(rest.headers));
    // Other tools still run: only the bucket is empty.
    await toolOk(svc, token, 'codes_read', { code_ulid: code });
  });

  it('meters each billable tool call as one call of its endpoint, and nothing else', async () => {
    const { org, token } = await svc.createOrg({ plan: 'business_monthly' });
    const viewer = await svc.createToken(org, { abilities: ['mcp.access', 'codes.view'] });
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    const start = await callsThisMonth(org.id); // the domains list above
    expect(start).to.equal(1);

    // Not billed: the free methods, the non-billable endpoints, a refused ability, a preview.
    await rpc(svc, token, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    await postMcp(svc, token, { jsonrpc: '2.0', method: 'notifications/initialized' });
    await rpc(svc, token, 'tools/list', {});
    await rpc(svc, token, 'ping');
    await toolOk(svc, token, 'status_read');
    await toolOk(svc, token, 'wallet_read');
    await toolError(svc, viewer, 'codes_create', {
      slug: 'nope',
      destination: 'https://example.com',
      domain_ulid: domain,
    });
    await rpc(svc, token, 'tools/call', { name: 'no_such_tool', arguments: {} });
    expect(await callsThisMonth(org.id)).to.equal(1);

    // Billed, one each: reads, a create, a 422 (admitted like REST's), a bulk create, a confirmed delete.
    await toolOk(svc, token, 'organization_read');
    await toolOk(svc, token, 'organization_read');
    await toolOk(svc, viewer, 'codes_list');
    const code = (
      await toolOk(svc, token, 'codes_create', { slug: 'm1', destination: 'https://example.com', domain_ulid: domain })
    ).data.ulid;
    await toolError(svc, token, 'codes_create', {
      slug: 'bad slug',
      destination: 'https://example.com',
      domain_ulid: domain,
    });
    await toolOk(svc, token, 'codes_bulk_create', {
      rows: [1, 2, 3].map((i) => ({ slug: `b${i}`, destination: 'https://example.com', domain_ulid: domain })),
    });
    expect(await callsThisMonth(org.id)).to.equal(1 + 6);

    const preview = await toolOk(svc, token, 'codes_delete', { code_ulid: code });
    expect(await callsThisMonth(org.id)).to.equal(7);
    await toolOk(svc, token, 'codes_delete', {
      code_ulid: code,
      confirm: true,
      confirmation_id: preview.confirmation_id,
    });
    expect(await callsThisMonth(org.id)).to.equal(8);

    // The same calls over REST count the same.
    await svc.get('/v1/organization', token);
    await svc.get('/v1/status', token);
    expect(await callsThisMonth(org.id)).to.equal(9);
  });

  it('answers a call the wallet cannot cover with the 402 body as a tool error', async () => {
    const { token } = await svc.createOrg({ plan: 'starter_monthly' });
    const rest = await svc.get('/v1/organization', token);
    expect(rest.status).to.equal(402);
    const err = await toolError(svc, token, 'organization_read');
    expect(err).to.deep.equal(rest.body);
    expect(await toolOk(svc, token, 'status_read')).to.have.property('status', 'ok');
  });
});
